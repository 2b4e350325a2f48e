package clustercheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// What an injected pod carries (spec 03 §3, §5): the webhook's status mark
// and at least one of the agent's containers.
const (
	StatusAnnotation = "dynamic-config.rs/status"
	StatusInjected   = "injected"
	// AgentContainer is the watching agent (a container, or a native sidecar
	// among the init containers); InitContainer the one-shot fetch.
	AgentContainer = "dynamic-config-agent"
	InitContainer  = "dynamic-config-init"
)

// ProofLabel marks the probe pod. The chart's install-proof webhook
// (install-proof.dynamic-config.rs) selects exactly the pods in the release
// namespace that carry it, and only in a dry run.
const (
	ProofLabel      = "dynamic-config.rs/install-proof"
	ProofLabelValue = "true"
)

// DefaultProbeAnnotations ask for an agent under the chart's default
// installation. The agent never runs (the pod is never stored): the endpoint
// names a host that does not resolve.
func DefaultProbeAnnotations() map[string]string {
	return map[string]string{
		"dynamic-config.rs/inject":   "true",
		"dynamic-config.rs/source":   "consul",
		"dynamic-config.rs/endpoint": "http://consul.invalid:8500",
		"dynamic-config.rs/key":      "dynamic-config/install-proof.json",
		"dynamic-config.rs/path":     "/config/install-proof.json",
	}
}

// Probe is one install proof: where and what to ask, and for how long.
type Probe struct {
	Client    kubernetes.Interface
	Namespace string
	// NamePrefix is the probe pod's generateName (the API server appends a
	// suffix; a dry run stores nothing, so the name is never taken).
	NamePrefix  string
	Image       string
	Annotations map[string]string
	// Timeout bounds the whole proof; each attempt is bounded by
	// AttemptTimeout. Backoff doubles from InitialBackoff up to MaxBackoff.
	Timeout        time.Duration
	AttemptTimeout time.Duration
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Logger         *slog.Logger
	// sleep waits between attempts (tests replace it).
	sleep func(context.Context, time.Duration) error
}

// ProofResult is what the proof found.
type ProofResult struct {
	Attempts int
	Elapsed  time.Duration
	// Pod is the answer that carried the agent (nil on failure).
	Pod *corev1.Pod
}

// ErrNotProven wraps the last attempt's error when the time ran out.
var ErrNotProven = errors.New("injection not proven")

// Pod is the probe pod: one container of image, the probe annotations, the
// proof label, no service-account token, and a restricted security context
// (Pod Security "restricted" admits it).
func (p *Probe) Pod() *corev1.Pod {
	no := false
	yes := true
	uid := int64(65532)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: p.NamePrefix + "-",
			Namespace:    p.Namespace,
			Labels:       map[string]string{ProofLabel: ProofLabelValue, "app.kubernetes.io/component": "install-proof"},
			Annotations:  maps.Clone(p.Annotations),
		},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			RestartPolicy:                corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &yes,
				RunAsUser:      &uid,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:    "install-proof",
				Image:   p.Image,
				Command: []string{"/dynamic-config", "version"},
				// Requests and limits: a ResourceQuota on the namespace refuses a
				// container without them, even in a dry run.
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &no,
					ReadOnlyRootFilesystem:   &yes,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// Run dry-run creates the probe pod until the answer carries the agent or
// Timeout passes. Every attempt is logged (attempt, result, the error); the
// error of a failed proof wraps ErrNotProven and names the last attempt's
// error.
func (p *Probe) Run(ctx context.Context) (ProofResult, error) {
	if err := p.validate(); err != nil {
		return ProofResult{}, err
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sleep := p.sleep
	if sleep == nil {
		sleep = sleepContext
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	backoff := p.InitialBackoff
	var last error
	for attempt := 1; ; attempt++ {
		pod, err := p.attempt(ctx)
		elapsed := time.Since(start).Round(time.Millisecond)
		if err == nil {
			log.Info("install proof: the answer carries the agent", "attempt", attempt, "namespace", p.Namespace, "elapsed", elapsed.String())
			return ProofResult{Attempts: attempt, Elapsed: elapsed, Pod: pod}, nil
		}
		last = err
		deadline, _ := ctx.Deadline()
		if ctx.Err() != nil || time.Until(deadline) < backoff {
			log.Error("install proof: attempt failed, giving up", "attempt", attempt, "namespace", p.Namespace, "elapsed", elapsed.String(), "error", err.Error())
			return ProofResult{Attempts: attempt, Elapsed: elapsed}, fmt.Errorf("%w after %d attempts in %s: %w", ErrNotProven, attempt, elapsed, last)
		}
		log.Warn("install proof: attempt failed, retrying", "attempt", attempt, "namespace", p.Namespace, "retry_in", backoff.String(), "error", err.Error())
		if err := sleep(ctx, backoff); err != nil {
			return ProofResult{Attempts: attempt, Elapsed: time.Since(start).Round(time.Millisecond)}, fmt.Errorf("%w after %d attempts: %w", ErrNotProven, attempt, last)
		}
		backoff = min(2*backoff, p.MaxBackoff)
	}
}

func (p *Probe) validate() error {
	switch {
	case p.Client == nil:
		return errors.New("install proof: no API server client")
	case p.Namespace == "":
		return errors.New("install proof: no namespace")
	case p.Image == "":
		return errors.New("install proof: no probe image")
	case p.Timeout <= 0 || p.AttemptTimeout <= 0 || p.InitialBackoff <= 0 || p.MaxBackoff < p.InitialBackoff:
		return fmt.Errorf("install proof: timeout %s, attempt timeout %s and backoff %s..%s must be positive and ordered", p.Timeout, p.AttemptTimeout, p.InitialBackoff, p.MaxBackoff)
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(p.Annotations)), annotation.Prefixed) {
		return errors.New("install proof: the probe annotations hold no " + annotation.Prefix + " key, so the webhook would never be asked")
	}
	return nil
}

// attempt is one server-side dry-run create; nil when the answer carries
// the agent.
func (p *Probe) attempt(ctx context.Context) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, p.AttemptTimeout)
	defer cancel()
	got, err := p.Client.CoreV1().Pods(p.Namespace).Create(ctx, p.Pod(), metav1.CreateOptions{
		DryRun:       []string{metav1.DryRunAll},
		FieldManager: "dynamic-config-install-proof",
	})
	if err != nil {
		return nil, fmt.Errorf("dry-run create of pod %s/%s*: %w", p.Namespace, p.NamePrefix, err)
	}
	if err := Injected(got); err != nil {
		return nil, fmt.Errorf("dry-run create of pod %s/%s* was admitted without the agent: %w", p.Namespace, p.NamePrefix, err)
	}
	return got, nil
}

// Injected is nil when pod carries what the webhook writes into a pod it
// injected: the status mark "injected" and one of the agent's containers.
// Otherwise it says what is missing.
func Injected(pod *corev1.Pod) error {
	status, marked := pod.Annotations[StatusAnnotation]
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	agent := slices.ContainsFunc(names, isAgent)
	switch {
	case !marked && !agent:
		return fmt.Errorf("no %s annotation and no %s or %s container: the injection webhook did not mutate it (not registered yet, or its selectors leave the pod out)", StatusAnnotation, AgentContainer, InitContainer)
	case status != StatusInjected:
		return fmt.Errorf("%s is %q; expected %q", StatusAnnotation, status, StatusInjected)
	case !agent:
		return fmt.Errorf("%s is %q but the pod has no %s or %s container (containers: %s)", StatusAnnotation, status, AgentContainer, InitContainer, strings.Join(names, ", "))
	}
	return nil
}

// isAgent: an agent of the default render, or of a named render <n>
// ("<agent>-<n>").
func isAgent(name string) bool {
	for _, base := range []string{AgentContainer, InitContainer} {
		if name == base || strings.HasPrefix(name, base+"-") {
			return true
		}
	}
	return false
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ProbeAnnotations are the probe pod's annotations from KEY=VALUE pairs
// (--probe-annotation), DefaultProbeAnnotations when there is none.
func ProbeAnnotations(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return DefaultProbeAnnotations(), nil
	}
	out := map[string]string{}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--probe-annotation is %q: want KEY=VALUE", kv)
		}
		out[k] = v
	}
	return out, nil
}
