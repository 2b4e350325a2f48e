package wirecodec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/encoding"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// Every message of the two services has the generated methods.
var (
	_ vtMessage = (*deciderv1.DecisionRequest)(nil)
	_ vtMessage = (*deciderv1.DecisionResponse)(nil)
	_ vtMessage = (*deciderv1.GetInstallationRequest)(nil)
	_ vtMessage = (*deciderv1.GetInstallationResponse)(nil)
	_ vtMessage = (*deciderv1.SyncRequest)(nil)
	_ vtMessage = (*deciderv1.InstallationSnapshot)(nil)
	_ vtMessage = (*deciderv1.WatchRevisionRequest)(nil)
	_ vtMessage = (*deciderv1.WatchRevisionResponse)(nil)
)

// countingCodec counts the messages the codec hands to its fallback.
type countingCodec struct {
	encoding.CodecV2
	marshals, unmarshals int
}

func (c *countingCodec) Marshal(v any) (mem.BufferSlice, error) {
	c.marshals++
	return c.CodecV2.Marshal(v)
}

func (c *countingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	c.unmarshals++
	return c.CodecV2.Unmarshal(data, v)
}

// standard is gRPC's own proto codec, the registered codec's fallback.
func standard(t testing.TB) encoding.CodecV2 {
	t.Helper()
	c, ok := encoding.GetCodecV2(Name).(codec)
	if !ok {
		t.Fatalf("the registered %q codec is %T, want the wirecodec", Name, encoding.GetCodecV2(Name))
	}
	return c.fallback
}

var timestampFixture = time.Date(2026, 12, 4, 14, 49, 36, 123456789, time.UTC)

func ptr[T any](v T) *T { return &v }

func pod() *deciderv1.PodFacts {
	return &deciderv1.PodFacts{
		Namespace:    "payments",
		Name:         "api-7d9f",
		GenerateName: "api-",
		Operation:    deciderv1.Operation_OPERATION_CREATE,
		DryRun:       true,
		Annotations: map[string]string{
			"dynamic-config.io/inject":          "true",
			"dynamic-config.io/store":           "consul",
			"kubectl.kubernetes.io/restartedAt": "2026-12-04T14:49:36Z",
			"empty":                             "",
			"unicode/ключ":                      "значение ✓",
		},
		Labels: map[string]string{"app": "api", "tier": "backend"},
		Containers: []*deciderv1.Container{{
			Name: "app", HasCommand: true, Command: []string{"/bin/app", "--serve"},
			HasArgs: true, Args: []string{"-v", ""}, HasLivenessProbe: true,
			RunAsUser: ptr(int64(-1)),
			Env: []*deciderv1.EnvVar{
				{Name: "EMPTY", Value: ptr("")},
				{Name: "FROM", ValueFrom: true},
				{Name: "PLAIN", Value: ptr("x")},
			},
			VolumeMountPaths: []string{"/etc/config"},
		}, {Name: "sidecar"}},
		InitContainers:                []*deciderv1.Container{{Name: "init", RunAsUser: ptr(int64(0))}},
		EphemeralContainers:           []*deciderv1.Container{{Name: "debug"}},
		RunAsUser:                     ptr(int64(1000)),
		TerminationGracePeriodSeconds: ptr(int64(0)),
		VolumeNames:                   []string{"config", "tmp"},
		ImagePullSecretNames:          []string{"regcred"},
		ResourceKind:                  deciderv1.ResourceKind(1),
		RequestUid:                    "0b5e8f0e-6f2a-4b8e-9d1e-1f0c2d3e4f5a",
		UserName:                      "system:serviceaccount:kube-system:replicaset-controller",
		WorkloadAnnotationKeys:        []string{"dynamic-config.io/inject"},
		RestartPolicy:                 "Always",
		AutomountServiceAccountToken:  ptr(false),
		QosGuaranteed:                 true,
	}
}

func probe(i int) *deciderv1.Probe {
	switch i {
	case 0:
		return &deciderv1.Probe{PeriodSeconds: 10, FailureThreshold: 3, Handler: &deciderv1.Probe_HttpGet{
			HttpGet: &deciderv1.HttpGetAction{Path: "/healthz", Port: &deciderv1.HttpGetAction_PortNumber{PortNumber: 8080}}}}
	case 1:
		return &deciderv1.Probe{Handler: &deciderv1.Probe_HttpGet{
			HttpGet: &deciderv1.HttpGetAction{Path: "/ready", Port: &deciderv1.HttpGetAction_PortName{PortName: "http"}}}}
	default:
		return &deciderv1.Probe{Handler: &deciderv1.Probe_Exec{Exec: &deciderv1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}}
	}
}

func decision() *deciderv1.Decision {
	return &deciderv1.Decision{
		DecisionId: "d-42",
		Outcome:    deciderv1.Outcome(1),
		SkipReason: deciderv1.SkipReason(2),
		Refusals: []*deciderv1.Refusal{{
			Reason: deciderv1.RefusalReason(1), ReasonSlug: "unknown-knob", HttpCode: 403,
			Message: "knob \"x\" is not a knob", Check: "knobs", Key: "dynamic-config.io/x", Render: "app",
		}},
		Warnings: []*deciderv1.Warning{{Code: "deprecated", Message: "use the new key"}},
		AuditAnnotations: map[string]string{
			"dynamic-config.io/decision": "d-42",
			"dynamic-config.io/outcome":  "mutated",
			"dynamic-config.io/revision": "sha256:abc",
		},
		Renders: []*deciderv1.Render{{
			Name: "app", Source: "annotation",
			Values: []*deciderv1.ResolvedValue{{
				Knob: "store", Value: "consul", Set: true, Tier: deciderv1.Tier(1), Pinned: true,
				OverrideRule: deciderv1.OverrideRule(1), AnnotationKey: "dynamic-config.io/store",
				Variable: "DC_STORE", DocumentPath: "stores.default", Store: "consul", Note: "n", Class: "c",
			}, {Knob: "empty"}},
			AgentContainers: []string{"dynamic-config-agent"}, Validated: true,
		}},
		Plan: &deciderv1.MutationPlan{
			StatusAnnotation: &deciderv1.Annotation{Key: "dynamic-config.io/status", Value: "injected"},
			Volumes: []*deciderv1.Volume{
				{Name: "a", Source: &deciderv1.Volume_EmptyDir{EmptyDir: &deciderv1.EmptyDirVolume{Medium: "Memory", SizeLimit: "1Mi"}}},
				{Name: "b", Source: &deciderv1.Volume_ConfigMap{ConfigMap: &deciderv1.ConfigMapVolume{Name: "cm"}}},
				{Name: "c", Source: &deciderv1.Volume_Secret{Secret: &deciderv1.SecretVolume{SecretName: "s", DefaultMode: 0o400}}},
				{Name: "d", Source: &deciderv1.Volume_EmptyDir{EmptyDir: &deciderv1.EmptyDirVolume{}}},
			},
			AppMounts: []*deciderv1.AppMount{{ContainerIndex: 0, ContainerName: "app",
				Mount: &deciderv1.VolumeMount{Name: "a", MountPath: "/dc", ReadOnly: true}}},
			ImagePullSecret: "regcred",
			CommandRewrite: &deciderv1.CommandRewrite{ContainerIndex: 1, ContainerName: "app",
				Command: []string{"/dc/wrap", "--"}, RemoveArgs: true, LivenessProbe: probe(0)},
			Agents: []*deciderv1.AgentPlacement{{
				List: deciderv1.ContainerList(1), Position: deciderv1.Position(1),
				Container: &deciderv1.AgentContainer{
					Name: "dynamic-config-agent", Image: "ghcr.io/x/agent:1", Args: []string{"run"},
					Env: []*deciderv1.AgentEnvVar{
						{Name: "V", Source: &deciderv1.AgentEnvVar_Value{Value: ""}},
						{Name: "S", Source: &deciderv1.AgentEnvVar_SecretKeyRef{SecretKeyRef: &deciderv1.SecretKeyRef{Name: "tok", Key: "token"}}},
						{Name: "F", Source: &deciderv1.AgentEnvVar_FieldRef{FieldRef: &deciderv1.FieldRef{FieldPath: "metadata.name"}}},
						{Name: "NONE"},
					},
					VolumeMounts: []*deciderv1.VolumeMount{{Name: "a", MountPath: "/dc"}},
					Resources: &deciderv1.Resources{
						Requests: map[string]string{"cpu": "10m", "memory": "16Mi"},
						Limits:   map[string]string{"memory": "32Mi", "": ""},
					},
					SecurityContext: &deciderv1.SecurityContext{RunAsNonRoot: true, RunAsUser: 65532, RunAsGroup: -2,
						CapabilitiesDrop: []string{"ALL"}, ReadOnlyRootFilesystem: true, SeccompProfileType: "RuntimeDefault"},
					Ports:          []*deciderv1.ContainerPort{{ContainerPort: 9090, Name: "metrics"}},
					ReadinessProbe: probe(1), RestartPolicy: "Always", Render: "app",
				},
			}, {Container: &deciderv1.AgentContainer{Name: "exec", ReadinessProbe: probe(2)}}},
		},
		InstallationRevision: "sha256:abc",
		Gates: []*deciderv1.GateRuling{{Gate: "g", Subject: "s", Render: "app", Passed: true, Namespace: "payments",
			Listing: []string{"a", "b"}}},
		EnvPolicyResults: []*deciderv1.EnvPolicyRuleResult{{Index: 2, Reject: "r", Mode: "deny", Applies: true,
			Failed: true, MatchedNames: []string{"A"}, MissingNames: []string{"B"}, Evaluated: true}},
		ClassesRevision: "sha256:def",
		Cluster:         "eu-1",
		Caller:          "frontdoor",
	}
}

func installation() *deciderv1.GetInstallationResponse {
	at := timestamppb.New(timestampFixture)
	return &deciderv1.GetInstallationResponse{
		Revision: "sha256:abc", LoadedAt: at, DocumentPath: "/etc/dc/installation.toml", DocumentPresent: true,
		Settings: []*deciderv1.Setting{{Name: "store", Variable: "DC_STORE", ChartValue: "store", Value: "consul",
			Set: true, Marker: deciderv1.Marker(1), Pinned: true, Source: deciderv1.SettingSource(1), Origin: "doc", BuiltIn: "x"}},
		StoreDefaults: []*deciderv1.StoreDefaults{
			{Store: "consul", Overridable: ptr(false), Knobs: []*deciderv1.Setting{{Name: "k"}}},
			{Store: "vault"},
		},
		Gates: []*deciderv1.Gate{{Name: "g", Variable: "DC_GATE", Groups: []*deciderv1.GateGroup{{Namespace: "ns", Names: []string{"a"}}}}},
		EnvPolicy: &deciderv1.EnvPolicy{Targets: []string{"app"}, Rules: []*deciderv1.EnvPolicyRule{{Index: 1, Reject: "r",
			EnvironmentVariables: []*deciderv1.EnvPolicyVariable{{Name: "A", HasValue: true}}, Namespaces: []string{"ns"}, Mode: "deny"}}},
		LastReload: &deciderv1.ReloadStatus{Ok: false, At: at, Problems: []string{"p"}, AttemptedRevision: "sha256:bad",
			ProblemFields: []*deciderv1.InstallationProblem{{Setting: "s", Path: "p", HiddenBy: "h", Value: "v", Expected: "e", Text: "t"}}},
		BuiltInAgentImage: "ghcr.io/x/agent:1", Stores: []string{"consul", "vault"}, Warnings: []string{"w"},
		Classes: []*deciderv1.ClassInfo{{Kind: "k", Namespace: "ns", Name: "n", Source: "s", Endpoint: "https://e",
			TokenSecret: &deciderv1.ClassTokenSecret{Name: "t", Namespace: "ns", Key: "k"}, Namespaces: []string{"a"}, KeyPrefixes: []string{"p/"}}},
		ClassesRevision: "sha256:def", Role: deciderv1.DeciderRole(1),
		Followers: []*deciderv1.FollowerState{{FollowerId: "f1", Cluster: "eu-2", Caller: "c", AppliedRevision: "r",
			LastAckAt: at, LastNack: &deciderv1.FollowerNack{Revision: "r0", ErrorDetail: "bad", At: at}, Connected: true,
			LastSeenAt: at, Leader: "l", LeaderRevision: "r", Stale: true}},
		Follower: &deciderv1.FollowerState{FollowerId: "self"},
	}
}

// withUnknown returns m with an unknown field (number 999) appended, as a
// newer peer would send it.
func withUnknown(m proto.Message) proto.Message {
	b := protowire.AppendTag(nil, 999, protowire.BytesType)
	b = protowire.AppendString(b, "from a newer peer")
	m.ProtoReflect().SetUnknown(b)
	return m
}

func manyAnnotations() *deciderv1.DecisionRequest {
	p := pod()
	for i := range 200 {
		p.Annotations["example.com/key-"+strings.Repeat("k", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))] = strings.Repeat("v", i)
	}
	return &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose(1), Pod: p}
}

func wireMessages() []struct {
	name string
	msg  proto.Message
} {
	return []struct {
		name string
		msg  proto.Message
	}{
		{"an empty decision request", &deciderv1.DecisionRequest{}},
		{"a decision request with a whole pod", &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose(1), Pod: pod(),
			View: deciderv1.DecisionView(1), Cluster: "eu-1"}},
		{"a decision request larger than gRPC's pooling threshold", manyAnnotations()},
		{"a decision request with an unknown field", withUnknown(&deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{Name: "x"}})},
		{"a decision response with a whole decision", &deciderv1.DecisionResponse{Decision: decision()}},
		{"a decision response with an empty decision", &deciderv1.DecisionResponse{Decision: &deciderv1.Decision{}}},
		{"an installation request", &deciderv1.GetInstallationRequest{}},
		{"an installation response with every field", installation()},
		{"a sync request with an ACK", &deciderv1.SyncRequest{FollowerId: "f1", Cluster: "eu-2", KnownRevision: "r",
			Answer: &deciderv1.SyncRequest_Ack{Ack: &deciderv1.SyncAck{Revision: "r", Nonce: "n"}}}},
		{"a sync request with a NACK", &deciderv1.SyncRequest{
			Answer: &deciderv1.SyncRequest_Nack{Nack: &deciderv1.SyncNack{Revision: "r", Nonce: "n", ErrorDetail: "bad"}}}},
		{"a sync request with an empty ACK", &deciderv1.SyncRequest{Answer: &deciderv1.SyncRequest_Ack{Ack: &deciderv1.SyncAck{}}}},
		{"an installation snapshot", &deciderv1.InstallationSnapshot{Revision: "r", Nonce: "n",
			Canonical: "[stores]\nconsul = {}\n", LoadedAt: timestamppb.New(timestampFixture), Heartbeat: true}},
		{"a revision watch request", &deciderv1.WatchRevisionRequest{Cluster: "eu-1"}},
		{"a revision announcement", &deciderv1.WatchRevisionResponse{InstallationRevision: "sha256:a", ClassesRevision: "sha256:b",
			Rollout: "canary/sha256:c", Heartbeat: true, HeartbeatInterval: durationpb.New(5 * time.Second), DeciderBuild: "v0.4.0"}},
	}
}

func TestTheCodecRoundTripsEveryWireMessageLikeTheProtoCodec(t *testing.T) {
	fallback := &countingCodec{CodecV2: standard(t)}
	c := New(fallback)
	for _, tc := range wireMessages() {
		t.Run(tc.name, func(t *testing.T) {
			fallback.marshals, fallback.unmarshals = 0, 0
			if _, ok := tc.msg.(vtMessage); !ok {
				t.Fatalf("%T has no generated vtproto methods", tc.msg)
			}
			data, err := c.Marshal(tc.msg)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			defer data.Free()
			vtBytes := data.Materialize()
			if len(vtBytes) != proto.Size(tc.msg) {
				t.Errorf("the codec wrote %d bytes, proto.Size says %d", len(vtBytes), proto.Size(tc.msg))
			}
			back := tc.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(vtBytes, back); err != nil {
				t.Fatalf("proto.Unmarshal of the codec's bytes: %v", err)
			}
			if !proto.Equal(back, tc.msg) {
				t.Errorf("proto.Unmarshal of the codec's bytes = %v, want %v", back, tc.msg)
			}

			protoBytes, err := proto.Marshal(tc.msg)
			if err != nil {
				t.Fatalf("proto.Marshal: %v", err)
			}
			got := tc.msg.ProtoReflect().New().Interface()
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(protoBytes)}, got); err != nil {
				t.Fatalf("Unmarshal of proto.Marshal's bytes: %v", err)
			}
			if !proto.Equal(got, tc.msg) {
				t.Errorf("the codec's Unmarshal of proto.Marshal's bytes = %v, want %v", got, tc.msg)
			}

			// Into a message already holding other values, as proto.Unmarshal
			// does: the old values go.
			reused := proto.Clone(wireMessages()[1].msg)
			if reused.ProtoReflect().Descriptor() == tc.msg.ProtoReflect().Descriptor() {
				if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(protoBytes)}, reused); err != nil {
					t.Fatalf("Unmarshal into a used message: %v", err)
				}
				if !proto.Equal(reused, tc.msg) {
					t.Errorf("the codec's Unmarshal into a used message = %v, want %v", reused, tc.msg)
				}
			}
			// A message with an unknown field is proto's to marshal (the
			// codec's wire check declines it); every other goes the fast way.
			wantMarshals := 0
			if len(tc.msg.ProtoReflect().GetUnknown()) > 0 {
				wantMarshals = 1
			}
			if fallback.marshals != wantMarshals || fallback.unmarshals != 0 {
				t.Errorf("%d marshals and %d unmarshals went to the fallback, want %d and 0", fallback.marshals, fallback.unmarshals, wantMarshals)
			}
		})
	}
}

func TestTheLargeCaseUsesGRPCsBufferPool(t *testing.T) {
	if size := proto.Size(manyAnnotations()); mem.IsBelowBufferPoolingThreshold(size) {
		t.Fatalf("the large case is %d bytes, below gRPC's pooling threshold", size)
	}
}

func TestAMessageWithoutGeneratedMethodsGoesThroughTheStandardCodec(t *testing.T) {
	fallback := &countingCodec{CodecV2: standard(t)}
	c := New(fallback)
	req := &healthpb.HealthCheckRequest{Service: "dynamicconfig.decider.v1.DeciderService"}
	data, err := c.Marshal(req)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	defer data.Free()
	var got healthpb.HealthCheckRequest
	if err := c.Unmarshal(data, &got); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !proto.Equal(&got, req) {
		t.Errorf("round trip = %v, want %v", &got, req)
	}
	if fallback.marshals != 1 || fallback.unmarshals != 1 {
		t.Errorf("the fallback saw %d marshals and %d unmarshals, want 1 and 1", fallback.marshals, fallback.unmarshals)
	}
	if _, err := c.Marshal("not a message"); err == nil {
		t.Error("Marshal of a string succeeded, want the standard codec's error")
	}
}

func TestTheRegisteredProtoCodecIsThisOne(t *testing.T) {
	if got := encoding.GetCodecV2("proto"); got == nil || got.Name() != "proto" {
		t.Fatalf(`the "proto" codec is %v`, got)
	}
	if _, ok := standard(t).(codec); ok {
		t.Error("the fallback is the wirecodec itself")
	}
}

// invalidUTF8 is wire data that proto.Unmarshal rejects: a string field that
// is not UTF-8, at the top, in a nested message and in a map entry.
var invalidUTF8 = []struct {
	name string
	b    []byte
}{
	{"a top-level string", appendString(nil, 4, "eu-\xff")},
	{"a nested message's string", appendBytes(nil, 2, appendString(nil, 2, "api-\xc3"))},
	{"a map key", appendBytes(nil, 2, appendBytes(nil, 6, appendString(nil, 1, "\xfe")))},
	{"a map value", appendBytes(nil, 2, appendBytes(nil, 6, appendString(appendString(nil, 1, "k"), 2, "\xed\xa0\x80")))},
	{"a repeated string of a nested container", appendBytes(nil, 2, appendBytes(nil, 8, appendString(nil, 3, "ok\x80")))},
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func TestTheCodecRejectsInvalidUTF8AsProtoDoes(t *testing.T) {
	c := New(standard(t))
	for _, tc := range invalidUTF8 {
		t.Run(tc.name, func(t *testing.T) {
			if err := proto.Unmarshal(tc.b, &deciderv1.DecisionRequest{}); err == nil {
				t.Fatal("proto.Unmarshal accepted it: the case is wrong")
			}
			// Why the codec checks: the generated unmarshaller does not.
			if err := (&deciderv1.DecisionRequest{}).UnmarshalVT(tc.b); err != nil {
				t.Logf("UnmarshalVT rejects it too: %v", err)
			}
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(tc.b)}, &deciderv1.DecisionRequest{}); err == nil {
				t.Error("the codec accepted invalid UTF-8")
			}
		})
	}
	bad := &deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{Labels: map[string]string{"app": "\xff"}}}
	if _, err := c.Marshal(bad); err == nil {
		t.Error("the codec marshalled invalid UTF-8, which proto.Marshal refuses")
	}
}

func TestAFieldWithAnotherWireTypeIsAnUnknownFieldAsInProto(t *testing.T) {
	// Field 4 (cluster, a string) sent as a varint: proto.Unmarshal keeps it
	// as an unknown field, UnmarshalVT fails; the codec answers as proto.
	b := protowire.AppendVarint(protowire.AppendTag(appendString(nil, 4, "eu-1"), 4, protowire.VarintType), 7)
	var want, got deciderv1.DecisionRequest
	if err := proto.Unmarshal(b, &want); err != nil {
		t.Fatalf("proto.Unmarshal: %v", err)
	}
	if err := (&deciderv1.DecisionRequest{}).UnmarshalVT(b); err == nil {
		t.Log("UnmarshalVT accepts it now: the fallback is no longer needed for this case")
	}
	if err := New(standard(t)).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got); err != nil {
		t.Fatalf("the codec: %v", err)
	}
	if !proto.Equal(&got, &want) {
		t.Errorf("the codec = %v, want %v", &got, &want)
	}
}

func TestAMapEntryFieldWithAnotherWireTypeIsAnUnknownFieldAsInProto(t *testing.T) {
	// A pod (2) whose annotations entry (6) sends its key (1) as fixed32
	// "\x03000": proto.Unmarshal skips it (key ""); the generated code read
	// it as the string "000" (FuzzTheCodecUnmarshalsLikeProto found it).
	b := []byte("\x12\a2\x05\r\x03000")
	var want, got deciderv1.DecisionRequest
	if err := proto.Unmarshal(b, &want); err != nil {
		t.Fatalf("proto.Unmarshal: %v", err)
	}
	if err := New(standard(t)).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got); err != nil {
		t.Fatalf("the codec: %v", err)
	}
	if !proto.Equal(&got, &want) {
		t.Errorf("the codec = %v, want proto.Unmarshal's %v", &got, &want)
	}
}

// FuzzTheCodecUnmarshalsLikeProto checks that whatever the codec's fast path
// (the wire check and UnmarshalVT) accepts, proto.Unmarshal accepts too and
// decodes to an equal message, and that the codec itself (the fast path, or
// proto.Unmarshal when it fails) answers exactly as proto.Unmarshal.
func FuzzTheCodecUnmarshalsLikeProto(f *testing.F) {
	for _, tc := range wireMessages() {
		b, err := proto.Marshal(tc.msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, tc := range invalidUTF8 {
		f.Add(tc.b)
	}
	c := New(standard(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newMsg := range []func() vtMessage{
			func() vtMessage { return &deciderv1.DecisionRequest{} },
			func() vtMessage { return &deciderv1.DecisionResponse{} },
		} {
			want := newMsg()
			werr := proto.Unmarshal(b, want)
			fast := newMsg()
			if err := fastUnmarshal(b, fast); err == nil {
				if werr != nil {
					t.Fatalf("%T: the fast path accepted what proto.Unmarshal rejects (%v)", fast, werr)
				}
				if !proto.Equal(fast, want) {
					t.Fatalf("%T: the fast path = %v, proto.Unmarshal = %v", fast, fast, want)
				}
			}
			got := newMsg()
			gerr := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
			var capped *podcaps.Error
			if errors.As(gerr, &capped) {
				// The one answer that is not proto's: a pod above the caps.
				if req, ok := want.(*deciderv1.DecisionRequest); ok && werr == nil {
					counts := reflectedCounts(req.GetPod())
					if counts.Check() == nil {
						t.Fatalf("the codec refused a pod within the caps: %v", gerr)
					}
				}
				continue
			}
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%T: the codec's error is %v, proto.Unmarshal's %v", got, gerr, werr)
			}
			if werr == nil && !proto.Equal(got, want) {
				t.Fatalf("%T: the codec = %v, proto.Unmarshal = %v", got, got, want)
			}
		}
	})
}

// reflectedCounts counts the pod's lists in an unmarshalled message.
func reflectedCounts(pod *deciderv1.PodFacts) podcaps.Counts {
	var c podcaps.Counts
	c[podcaps.Containers] = len(pod.GetContainers())
	c[podcaps.InitContainers] = len(pod.GetInitContainers())
	c[podcaps.EphemeralContainers] = len(pod.GetEphemeralContainers())
	c[podcaps.Volumes] = len(pod.GetVolumeNames())
	c[podcaps.ImagePullSecrets] = len(pod.GetImagePullSecretNames())
	c[podcaps.Labels] = len(pod.GetLabels())
	c[podcaps.Annotations] = len(pod.GetAnnotations()) + len(pod.GetWorkloadAnnotationKeys())
	for _, list := range [][]*deciderv1.Container{pod.GetContainers(), pod.GetInitContainers(), pod.GetEphemeralContainers()} {
		for _, ct := range list {
			c[podcaps.Env] += len(ct.GetEnv())
			c[podcaps.VolumeMounts] += len(ct.GetVolumeMountPaths())
			c[podcaps.Command] += len(ct.GetCommand())
			c[podcaps.Args] += len(ct.GetArgs())
		}
	}
	return c
}

// FuzzTheCapsCountWhatProtoUnmarshals: whatever the bytes, the entries the
// codec counts before unmarshalling a DecisionRequest are at least those
// proto.Unmarshal builds (more only for a map's repeated keys), so no pod
// above the caps gets through the count.
func FuzzTheCapsCountWhatProtoUnmarshals(f *testing.F) {
	for _, tc := range wireMessages() {
		if req, ok := tc.msg.(*deciderv1.DecisionRequest); ok {
			b, err := proto.Marshal(req)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	full := &deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{
		Annotations: map[string]string{"dynamic-config.rs/inject": "true"}, Labels: map[string]string{"a": "b"},
		Containers:          []*deciderv1.Container{{Name: "a", Env: []*deciderv1.EnvVar{{Name: "E"}}, Command: []string{"x"}, Args: []string{"y", "z"}, VolumeMountPaths: []string{"/m"}}},
		InitContainers:      []*deciderv1.Container{{Env: []*deciderv1.EnvVar{{}, {}}}},
		EphemeralContainers: []*deciderv1.Container{{}},
		VolumeNames:         []string{"v"}, ImagePullSecretNames: []string{"s"}, WorkloadAnnotationKeys: []string{"dynamic-config.rs/k"},
	}}
	b, err := proto.Marshal(full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	md := (&deciderv1.DecisionRequest{}).ProtoReflect().Descriptor()
	f.Fuzz(func(t *testing.T, b []byte) {
		var req deciderv1.DecisionRequest
		if proto.Unmarshal(b, &req) != nil {
			return
		}
		var counts podcaps.Counts
		if err := tableOf(md).check(b, protowire.DefaultRecursionLimit, &counts); err == errMalformed || err == errTooDeep {
			t.Fatalf("proto.Unmarshal read what the count calls %v", err)
		}
		want := reflectedCounts(req.GetPod())
		for _, fl := range podcaps.Fields() {
			if counts[fl] < want[fl] {
				t.Fatalf("%s: counted %d, proto.Unmarshal built %d", fl.Name(), counts[fl], want[fl])
			}
		}
	})
}

func TestEveryListOfThePodOnTheWireIsCounted(t *testing.T) {
	for name := range countedFields {
		t.Run(string(name)+" is a repeated field of the wire", func(t *testing.T) {
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
			fd, ok := d.(protoreflect.FieldDescriptor)
			if err != nil || !ok || !(fd.IsList() || fd.IsMap()) {
				t.Errorf("%v %T: not a repeated field", err, d)
			}
		})
	}
	for _, md := range []protoreflect.MessageDescriptor{
		(&deciderv1.PodFacts{}).ProtoReflect().Descriptor(), (&deciderv1.Container{}).ProtoReflect().Descriptor(),
	} {
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if !fd.IsList() && !fd.IsMap() {
				continue
			}
			t.Run(string(fd.FullName())+" is counted", func(t *testing.T) {
				if _, ok := countedFields[fd.FullName()]; !ok {
					t.Error("a list of the pod the caps do not count")
				}
			})
		}
	}
}
