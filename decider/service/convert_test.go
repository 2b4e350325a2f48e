package service

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func ptr[T any](v T) *T { return &v }

// richDecision sets every field of the plain decision at least once.
func richDecision() *decision.Decision {
	probe := &decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortName: "metrics"}, PeriodSeconds: 5, FailureThreshold: 60}
	return &decision.Decision{
		DecisionID: "2f1e7c1a-0d6e-4a43-9a53-0e0f5b8c1d2e",
		Outcome:    decision.OutcomeInject,
		SkipReason: decision.SkipNotTargeted,
		Refusals: []decision.Refusal{{Reason: decision.ReasonPinned, Slug: "DynamicConfigPinned", HTTPCode: 400,
			Message: "m", Check: "pin.endpoint", Key: "dynamic-config.rs/endpoint.cache", Render: "cache"}},
		Warnings:         []decision.Warning{{Code: "volume-disk", Message: "w1"}, {Code: "tls-skip-verify", Message: `render "cache": w2`, Render: "cache"}},
		AuditAnnotations: map[string]string{"revision": "sha256:abc", "env-policy-rule-0": "x"},
		Renders: []decision.Render{
			{Name: "", Source: "consul", AgentContainers: []string{"dynamic-config-init", "dynamic-config-agent"}, Validated: true,
				Values: []decision.ResolvedValue{
					{Knob: "watch-seconds", Value: "10", Set: true, Tier: decision.TierStoreDefault, Pinned: true,
						OverrideRule: decision.OverrideStoreFlag, Variable: "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS",
						DocumentPath: "storeDefaults.consul.watch-seconds", Store: "consul", Note: "n"},
					{Knob: "agent-run-as-user", Value: "1000", Set: true, Tier: decision.TierPodSpec,
						OverrideRule: decision.OverrideNotApplicable, Note: "inherited"},
					{Knob: "file-mode", Tier: decision.TierNone, OverrideRule: decision.OverrideNotApplicable},
					{Knob: "source", Value: "consul", Set: true, Tier: decision.TierAnnotation,
						OverrideRule: decision.OverrideMarker, AnnotationKey: "dynamic-config.rs/source"},
				}},
			{Name: "cache", Source: "redis"},
		},
		Plan: &decision.Plan{
			StatusAnnotation: decision.Annotation{Key: "dynamic-config.rs/status", Value: "injected"},
			Volumes: []decision.Volume{
				{Name: "dynamic-config", EmptyDir: &decision.EmptyDirVolume{Medium: "Memory", SizeLimit: "16Mi"}},
				{Name: "dynamic-config-ca", ConfigMap: &decision.ConfigMapVolume{Name: "ca"}},
				{Name: "dynamic-config-ssh", Secret: &decision.SecretVolume{SecretName: "ssh", DefaultMode: 256}},
			},
			AppMounts:       []decision.AppMount{{ContainerIndex: 1, ContainerName: "app", Mount: decision.VolumeMount{Name: "dynamic-config", MountPath: "/config"}}},
			ImagePullSecret: "regcred",
			CommandRewrite: &decision.CommandRewrite{ContainerIndex: 1, ContainerName: "app", Command: []string{"/bin/sh", "-c", "x"},
				RemoveArgs: true, LivenessProbe: &decision.Probe{Exec: &decision.ExecAction{Command: []string{"test"}}, PeriodSeconds: 15, FailureThreshold: 1}},
			Agents: []decision.AgentPlacement{
				{List: decision.ListInitContainers, Position: decision.PositionFirst, Container: decision.AgentContainer{
					Name: "dynamic-config-init", Image: "img", Args: []string{"--source", "consul"},
					Env: []decision.AgentEnvVar{
						{Name: "DYNAMIC_CONFIG_AGENT_TOKEN", SecretKeyRef: &decision.SecretKeyRef{Name: "s", Key: "k"}},
						{Name: "DYNAMIC_CONFIG_POD_NAME", FieldRef: &decision.FieldRef{FieldPath: "metadata.name"}},
						{Name: "RUST_LOG", Value: ptr("info")},
						{Name: "EMPTY", Value: ptr("")},
					},
					VolumeMounts: []decision.VolumeMount{{Name: "dynamic-config", MountPath: "/config"}, {Name: "dynamic-config-ca", MountPath: "/etc/dynamic-config/ca", ReadOnly: true}},
					Requests:     map[string]string{"cpu": "10m", "memory": "32Mi", "ephemeral-storage": "1Mi"},
					Limits:       map[string]string{"memory": "64Mi"},
					SecurityContext: decision.SecurityContext{RunAsNonRoot: true, RunAsUser: 65532, RunAsGroup: 65532,
						CapabilitiesDrop: []string{"ALL"}, ReadOnlyRootFilesystem: true, SeccompProfileType: "RuntimeDefault"},
				}},
				{List: decision.ListInitContainers, Position: decision.PositionAppend, Container: decision.AgentContainer{
					Name: "dynamic-config-agent", Image: "img", Args: []string{"--watch", "10"},
					Requests: map[string]string{"cpu": "10m"}, Limits: map[string]string{"memory": "64Mi"},
					Ports:          []decision.ContainerPort{{ContainerPort: 9110, Name: "metrics"}},
					ReadinessProbe: probe, RestartPolicy: "Always", Render: "",
					StartupProbe: &decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortName: "metrics"}, PeriodSeconds: 2, FailureThreshold: 150},
				}},
				{List: decision.ListContainers, Position: decision.PositionAppend, Container: decision.AgentContainer{
					Name: "dynamic-config-agent-cache", Render: "cache",
					Ports:          []decision.ContainerPort{{ContainerPort: 9111}},
					ReadinessProbe: &decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortNumber: 9111}, PeriodSeconds: 5, FailureThreshold: 60},
				}},
			},
		},
		InstallationRevision: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
		Gates: []decision.GateRuling{{Gate: "sourceAllow", Subject: "consul", Render: "", Passed: true, Namespace: "default",
			Listing: []string{"consul", "vault"}}},
		EnvPolicyResults: []decision.EnvPolicyRuleResult{{Index: 2, Reject: "anyIn", Mode: "warn", Applies: true, Failed: true,
			MatchedNames: []string{"A"}, MissingNames: []string{"B"}, Evaluated: true}},
	}
}

func TestDecisionConversion(t *testing.T) {
	t.Run("a rich decision survives plain → proto → wire → proto → plain unchanged", func(t *testing.T) {
		want := richDecision()
		wire, err := proto.Marshal(DecisionToProto(want))
		if err != nil {
			t.Fatal(err)
		}
		var back deciderv1.Decision
		if err := proto.Unmarshal(wire, &back); err != nil {
			t.Fatal(err)
		}
		got := DecisionFromProto(&back)
		// the default render's container has no Render value; the ordinary zero value round-trips
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("round trip differs:\n got %s\nwant %s", g, w)
		}
	})
	t.Run("a skip without a plan converts to a message without a plan", func(t *testing.T) {
		d := DecisionToProto(&decision.Decision{Outcome: decision.OutcomeSkip, SkipReason: decision.SkipNotRequested})
		if d.Plan != nil || d.Outcome != deciderv1.Outcome_OUTCOME_SKIP || d.SkipReason != deciderv1.SkipReason_SKIP_REASON_NOT_REQUESTED {
			t.Errorf("got %v", d)
		}
	})
	t.Run("the security context keeps its false members on the wire", func(t *testing.T) {
		sc := DecisionToProto(richDecision()).Plan.Agents[0].Container.SecurityContext
		if sc.AllowPrivilegeEscalation || !sc.RunAsNonRoot || sc.SeccompProfileType != "RuntimeDefault" {
			t.Errorf("security context = %v", sc)
		}
	})
}

func TestFactsConversion(t *testing.T) {
	want := &decision.Facts{
		Purpose: decision.PurposeMutate, Namespace: "ns", Name: "pod", GenerateName: "pod-", Operation: decision.OperationCreate,
		DryRun: true, Annotations: map[string]string{"dynamic-config.rs/inject": "true"}, Labels: map[string]string{"app": "x"},
		Containers: []decision.Container{{Name: "app", HasCommand: true, Command: []string{"/app"}, HasArgs: true, Args: []string{"-v"},
			HasLivenessProbe: true, RunAsUser: ptr(int64(1000)),
			Env:              []decision.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: true}, {Name: "C"}},
			VolumeMountPaths: []string{"/data"}}},
		InitContainers:                []decision.Container{{Name: "init"}},
		EphemeralContainers:           []decision.Container{{Name: "debug"}},
		RunAsUser:                     ptr(int64(0)),
		TerminationGracePeriodSeconds: ptr(int64(45)),
		VolumeNames:                   []string{"data"}, ImagePullSecretNames: []string{"regcred"},
		ResourceKind: decision.KindPod, RequestUID: "uid", UserName: "alice", WorkloadAnnotationKeys: []string{"dynamic-config.rs/x"},
		RestartPolicy: "OnFailure", AutomountServiceAccountToken: ptr(false), QoSGuaranteed: true,
		ControllerKind: "ReplicaSet", ControllerName: "pod-5d9c7b8f6",
	}
	wire, err := proto.Marshal(FactsToProto(want))
	if err != nil {
		t.Fatal(err)
	}
	var back deciderv1.PodFacts
	if err := proto.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	if got := FactsFromProto(deciderv1.Purpose_PURPOSE_MUTATE, &back); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("facts round trip differs:\n got %s\nwant %s", g, w)
	}
	if v := FactsToProto(want).Containers[0].Env[2].Value; v == nil || *v != "" {
		t.Errorf("an env entry without valueFrom must carry value \"\" (06 §2.4), got %v", v)
	}
}

// The plain enums and the protobuf enums agree number for number, so the
// conversions may cast.
func TestEnumsMirrorTheProto(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{deciderv1.Purpose(decision.PurposeValidate).String(), "PURPOSE_VALIDATE"},
		{deciderv1.Operation(decision.OperationConnect).String(), "OPERATION_CONNECT"},
		{deciderv1.ResourceKind(decision.KindCronJob).String(), "RESOURCE_KIND_CRON_JOB"},
		{deciderv1.ResourceKind(decision.KindReplicationController).String(), "RESOURCE_KIND_REPLICATION_CONTROLLER"},
		{deciderv1.Outcome(decision.OutcomeAllow).String(), "OUTCOME_ALLOW"},
		{deciderv1.SkipReason(decision.SkipNotTargeted).String(), "SKIP_REASON_NOT_TARGETED"},
		{deciderv1.SkipReason(decision.SkipAlreadyInjected).String(), "SKIP_REASON_ALREADY_INJECTED"},
		{deciderv1.RefusalReason(decision.ReasonEnvPolicy).String(), "REFUSAL_REASON_ENV_POLICY"},
		{deciderv1.Tier(decision.TierNone).String(), "TIER_NONE"},
		{deciderv1.Tier(decision.TierPodSpec).String(), "TIER_POD_SPEC"},
		{deciderv1.OverrideRule(decision.OverrideNotApplicable).String(), "OVERRIDE_RULE_NOT_APPLICABLE"},
		{deciderv1.OverrideRule(decision.OverrideStoreFlag).String(), "OVERRIDE_RULE_STORE_FLAG"},
		{deciderv1.ContainerList(decision.ListInitContainers).String(), "CONTAINER_LIST_INIT_CONTAINERS"},
		{deciderv1.Position(decision.PositionFirst).String(), "POSITION_FIRST"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("enum mismatch: %s, want %s", c.got, c.want)
		}
	}
}
