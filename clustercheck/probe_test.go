package clustercheck

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestInjected(t *testing.T) {
	withContainers := func(ann map[string]string, init []string, names ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
		for _, n := range init {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: n})
		}
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
		}
		return p
	}
	marked := map[string]string{StatusAnnotation: StatusInjected}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string // "" = injected
	}{
		{"a pod with the mark and the agent container is injected", withContainers(marked, nil, "app", AgentContainer), ""},
		{"a pod with the mark and the agent as a native sidecar is injected", withContainers(marked, []string{AgentContainer}, "app"), ""},
		{"a pod with the mark and the init agent is injected", withContainers(marked, []string{InitContainer}, "app"), ""},
		{"a pod with a named render's agent is injected", withContainers(marked, nil, "app", AgentContainer+"-db"), ""},
		{"a pod the webhook never saw says so", withContainers(nil, nil, "app"), "did not mutate it"},
		{"a pod with another status value names it", withContainers(map[string]string{StatusAnnotation: "skipped"}, nil, "app", AgentContainer), `is "skipped"; expected "injected"`},
		{"a pod with the mark but no agent names its containers", withContainers(marked, nil, "app"), "containers: app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Injected(tt.pod)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Injected: %v; want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Injected: %v; want an error saying %q", err, tt.want)
			}
		})
	}
}

// answers is a create reactor that answers the probe's dry runs in turn
// (the last answer repeats) and records what it was asked.
type answers struct {
	steps []func(*corev1.Pod) (*corev1.Pod, error)
	asked []*corev1.Pod
	opts  []metav1.CreateOptions
}

func (a *answers) react(action k8stesting.Action) (bool, runtime.Object, error) {
	c := action.(k8stesting.CreateActionImpl)
	pod := c.GetObject().(*corev1.Pod).DeepCopy()
	a.asked = append(a.asked, pod)
	a.opts = append(a.opts, c.CreateOptions)
	step := a.steps[min(len(a.asked), len(a.steps))-1]
	got, err := step(pod)
	if err != nil {
		return true, nil, err
	}
	return true, got, nil
}

func inject(p *corev1.Pod) (*corev1.Pod, error) {
	p = p.DeepCopy()
	p.Annotations[StatusAnnotation] = StatusInjected
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: AgentContainer})
	return p, nil
}

func admitUnchanged(p *corev1.Pod) (*corev1.Pod, error) { return p, nil }

func webhookDown(*corev1.Pod) (*corev1.Pod, error) {
	return nil, apierrors.NewInternalError(errors.New(`failed calling webhook "install-proof.dynamic-config.rs": connection refused`))
}

func TestProbeRun(t *testing.T) {
	tests := []struct {
		name     string
		steps    []func(*corev1.Pod) (*corev1.Pod, error)
		timeout  time.Duration
		attempts int
		wantErr  []string
		logs     []string
	}{
		{name: "an answer with the agent proves injection at once", steps: []func(*corev1.Pod) (*corev1.Pod, error){inject},
			timeout: time.Minute, attempts: 1, logs: []string{"the answer carries the agent", "attempt=1"}},
		{name: "a webhook that comes up after two failures is proven on the third attempt",
			steps:   []func(*corev1.Pod) (*corev1.Pod, error){webhookDown, admitUnchanged, inject},
			timeout: time.Minute, attempts: 3, logs: []string{"attempt=1", "connection refused", "retry_in=10ms", "attempt=2", "retry_in=20ms", "did not mutate it", "attempt=3"}},
		{name: "a webhook that stays down fails with the last error",
			steps:   []func(*corev1.Pod) (*corev1.Pod, error){admitUnchanged, webhookDown},
			timeout: 300 * time.Millisecond, wantErr: []string{"injection not proven after", "attempts", `failed calling webhook "install-proof.dynamic-config.rs": connection refused`},
			logs: []string{"giving up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			a := &answers{steps: tt.steps}
			client.PrependReactor("create", "pods", a.react)
			var logs bytes.Buffer
			p := &Probe{
				Client: client, Namespace: "dynamic-config", NamePrefix: "dc-install-proof", Image: "example/dynamic-config:v1",
				Annotations: DefaultProbeAnnotations(), Timeout: tt.timeout, AttemptTimeout: time.Second,
				InitialBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			}
			res, err := p.Run(context.Background())
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if res.Attempts != tt.attempts || res.Pod == nil {
					t.Errorf("Run took %d attempts (pod %v); want %d and the answer", res.Attempts, res.Pod != nil, tt.attempts)
				}
			} else {
				if err == nil || !errors.Is(err, ErrNotProven) {
					t.Fatalf("Run: %v; want ErrNotProven", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			}
			for _, l := range tt.logs {
				if !strings.Contains(logs.String(), l) {
					t.Errorf("log does not say %q:\n%s", l, logs.String())
				}
			}
			for i, o := range a.opts {
				if len(o.DryRun) != 1 || o.DryRun[0] != metav1.DryRunAll {
					t.Errorf("attempt %d created with dryRun %v; want [All]: the probe must never store a pod", i+1, o.DryRun)
				}
			}
			for _, pod := range a.asked {
				if pod.Labels[ProofLabel] != ProofLabelValue || pod.Namespace != "dynamic-config" || pod.GenerateName != "dc-install-proof-" {
					t.Errorf("the probe pod is %s/%s with labels %v; want the proof label in the release namespace", pod.Namespace, pod.GenerateName, pod.Labels)
				}
				if pod.Annotations["dynamic-config.rs/inject"] != "true" {
					t.Errorf("the probe pod does not ask: %v", pod.Annotations)
				}
			}
		})
	}
}

func TestProbeRefusesAProbeThatCannotAsk(t *testing.T) {
	p := &Probe{Client: fake.NewClientset(), Namespace: "ns", NamePrefix: "p", Image: "i", Annotations: map[string]string{"team": "x"},
		Timeout: time.Second, AttemptTimeout: time.Second, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	if _, err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no dynamic-config.rs/ key") {
		t.Errorf("Run with annotations that do not ask: %v; want a refusal", err)
	}
}
