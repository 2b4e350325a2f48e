package inject_test

// Door-level proofs of the environment-variable policy (spec 05, issue 6):
// the truth tables of §4.1/§4.2 through the HTTPS front door's /validate
// (frontdoor/daemon before a decider/daemon over loopback gRPC:
// test/loopback) and through this door's -o review (Documents over the
// offline engine); workloads of every kind, the ephemeral-containers
// subresource, UPDATE, modes, targets and the workload-annotation warning
// through /validate; and an injected pod refused for its fleet agentEnv
// (§6, §8). A decider that refuses to start on an invalid policy is
// decider/daemon's test.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/doors/inject"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/test/cases"
	"github.com/dynamic-config-admission/dynamic-config/test/loopback"
)

// The refusal status of spec 05 §5.
const (
	envDoorSlug = "DynamicConfigEnvPolicy"
	envDoorCode = 403
)

// envEntry is one env entry of a container, as a manifest writes it.
type envEntry = map[string]any

func envLiteral(name, value string) envEntry { return envEntry{"name": name, "value": value} }
func envNameOnly(name string) envEntry       { return envEntry{"name": name} }
func envFromSecret(name string) envEntry {
	return envEntry{"name": name, "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "app-secret", "key": "k"}}}
}
func envFromConfigMap(name string) envEntry {
	return envEntry{"name": name, "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "app-config", "key": "k"}}}
}

// envSpread places env entries in the three container lists of a pod spec.
// The spec always has an app container and an init container (with or
// without env); an ephemeral container exists when ephemeral is non-nil.
type envSpread struct {
	containers, initContainers, ephemeral []envEntry
	// envFrom gives the app container an envFrom of a ConfigMap.
	envFrom bool
}

func (s envSpread) podSpec() map[string]any {
	app := map[string]any{"name": "app", "image": "registry.example/app:1"}
	if len(s.containers) > 0 {
		app["env"] = s.containers
	}
	if s.envFrom {
		app["envFrom"] = []any{map[string]any{"configMapRef": map[string]any{"name": "app-env"}}}
	}
	setup := map[string]any{"name": "setup", "image": "registry.example/setup:1"}
	if len(s.initContainers) > 0 {
		setup["env"] = s.initContainers
	}
	spec := map[string]any{"containers": []any{app}, "initContainers": []any{setup}}
	if s.ephemeral != nil {
		debug := map[string]any{"name": "debug", "image": "busybox:1"}
		if len(s.ephemeral) > 0 {
			debug["env"] = s.ephemeral
		}
		spec["ephemeralContainers"] = []any{debug}
	}
	return spec
}

// envPod is a Pod manifest (JSON) without dynamic-config.rs/ annotations.
func envPod(t *testing.T, namespace string, s envSpread) []byte {
	t.Helper()
	return envMarshal(t, map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "app", "namespace": namespace},
		"spec":     s.podSpec(),
	})
}

func envMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// envInstallation writes an installation document and loads it as the
// decider would, without the process environment.
func envInstallation(t *testing.T, document string) (string, *installation.Installation) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "installation.yaml")
	if err := os.WriteFile(path, []byte(document), 0o600); err != nil {
		t.Fatal(err)
	}
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: path, DocumentExplicit: true})
	if err != nil {
		t.Fatalf("load the installation:\n%v\n%s", err, document)
	}
	if inst.EnvPolicy == nil {
		t.Fatalf("the installation holds no envPolicy:\n%s", document)
	}
	return path, inst
}

// envRuleDocument is an installation with one enforce rule.
func envRuleDocument(reject, listed string) string {
	return "envPolicy:\n  rules:\n    - reject: " + reject + "\n      environmentVariables:\n" + listed
}

// envReviewOf is an AdmissionReview for /validate.
type envReviewOf struct {
	uid, group, version, kind, resource, subResource string
	namespace, operation                             string
	dryRun                                           bool
	object, oldObject                                []byte
}

// envDoorUID is the uid of every review these tests send without one.
const envDoorUID = "env-door"

func (r envReviewOf) requestUID() string {
	if r.uid == "" {
		return envDoorUID
	}
	return r.uid
}

func (r envReviewOf) body(t *testing.T) []byte {
	t.Helper()
	op := r.operation
	if op == "" {
		op = "CREATE"
	}
	var dryRun *bool
	if r.dryRun {
		dryRun = &r.dryRun
	}
	return envMarshal(t, review.Review{APIVersion: review.APIVersion, Kind: review.Kind, Request: &review.Request{
		UID:         r.requestUID(),
		Kind:        review.GroupVersionKind{Group: r.group, Version: r.version, Kind: r.kind},
		Resource:    review.GroupVersionResource{Group: r.group, Version: r.version, Resource: r.resource},
		SubResource: r.subResource,
		Name:        "app",
		Namespace:   r.namespace,
		Operation:   op,
		Object:      r.object,
		OldObject:   r.oldObject,
		DryRun:      dryRun,
	}})
}

func envPodReview(namespace string, pod []byte) envReviewOf {
	return envReviewOf{version: "v1", kind: "Pod", resource: "pods", namespace: namespace, object: pod}
}

// validate posts a review to the HTTPS front door's /validate.
func envValidate(t *testing.T, d *loopback.Cluster, r envReviewOf) *review.Response {
	t.Helper()
	resp, _, err := d.Door(handler.PathValidate, r.body(t))
	if err != nil {
		t.Fatalf("/validate: %v", err)
	}
	if resp.UID != r.requestUID() {
		t.Fatalf("the front door echoed uid %q, want %q", resp.UID, r.requestUID())
	}
	return resp
}

// envExpectDenial checks an answer: refused with the env-policy status and
// exactly message, or (message "") allowed without a status or warnings.
func envExpectDenial(t *testing.T, got *review.Response, message string) {
	t.Helper()
	if message == "" {
		if !got.Allowed || got.Status != nil || len(got.Warnings) != 0 {
			t.Errorf("want allowed without warnings, got %s", review.Encode(got))
		}
		return
	}
	want := review.Status{Code: envDoorCode, Message: message, Reason: envDoorSlug}
	if got.Allowed || got.Status == nil || *got.Status != want || got.Patch != "" {
		t.Errorf("want refused %+v, got %s", want, review.Encode(got))
	}
}

// envExpectDecided checks that the decider answered (every decided answer
// names the installation's revision; an allow without an RPC does not).
func envExpectDecided(t *testing.T, got *review.Response, inst *installation.Installation) {
	t.Helper()
	if got.AuditAnnotations["revision"] != inst.Revision {
		t.Errorf("the answer does not carry the decider's revision %s: %s", inst.Revision, review.Encode(got))
	}
	if !cases.DecisionIDPattern.MatchString(got.AuditAnnotations["decision-id"]) {
		t.Errorf("the answer does not carry the decision id next to the revision: %s", review.Encode(got))
	}
}

// envInject runs the pod through this door with -o review (Documents, then
// WriteOutput) and returns the answer; it checks the door's line for the
// pod against the answer, as the command prints it.
func envInject(t *testing.T, installationPath, namespace string, pod []byte) *review.Response {
	t.Helper()
	podPath := filepath.Join(t.TempDir(), "pod.json")
	if err := os.WriteFile(podPath, pod, 0o600); err != nil {
		t.Fatal(err)
	}
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: installationPath, DocumentExplicit: true})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := manifest.Read("inject", []string{podPath}, false, nil, inject.Admit)
	if err != nil {
		t.Fatal(err)
	}
	results, err := inject.Documents(inst, nil, docs, namespace, "")
	if err != nil {
		t.Fatal(err)
	}
	var out, lines bytes.Buffer
	if err := inject.WriteOutput(&out, results, "review"); err != nil {
		t.Fatal(err)
	}
	got, err := review.DecodeAnswer(out.Bytes())
	if err != nil {
		t.Fatalf("-o review wrote %q: %v", out.String(), err)
	}
	if results[0].Refused() == got.Allowed {
		t.Fatalf("refused=%v for allowed=%v", results[0].Refused(), got.Allowed)
	}
	for _, target := range results[0].Targets {
		inject.WriteLine(&lines, podPath, target, false)
	}
	if !got.Allowed && got.Status != nil {
		line := podPath + ": refused (" + got.Status.Reason + " 403): " + got.Status.Message + "\n"
		if !strings.HasPrefix(lines.String(), line) {
			t.Errorf("the line %q, want it to start with %q", lines.String(), line)
		}
	}
	return got
}

// envTruthCase is one cell of the truth tables: an operator over a listed
// set, the variable set R spread over the container lists, and the exact
// refusal message ("" = admitted).
type envTruthCase struct {
	name   string
	reject string
	listed string // the rule's environmentVariables, as YAML
	spread envSpread
	denial string
}

const (
	envListedAB = "        - name: ALPHA\n        - name: BETA\n"
	// L = [LOG_LEVEL = debug, TRACE] of spec 05 §4.2.
	envListedValued = "        - name: LOG_LEVEL\n          value: debug\n        - name: TRACE\n"
	envTeam         = "team-a"
)

// envTruthTables are every cell of spec 05 §4.1 (L = [ALPHA, BETA], C =
// GAMMA) for the four operators, every row of §4.2, and the §4.2 matching
// under the other operators. The variables move between containers,
// initContainers and ephemeralContainers from row to row.
func envTruthTables() []envTruthCase {
	const pre = `envPolicy.rules[0] (`
	const in = `) rejects this Pod in namespace "team-a": `
	deny := func(op, detail string) string { return pre + op + in + detail }

	// The rows of §4.1.
	rows := []struct {
		name   string
		spread envSpread
	}{
		{"no env at all", envSpread{}},
		{"ALPHA alone (an init container)", envSpread{initContainers: []envEntry{envLiteral("ALPHA", "1")}}},
		{"BETA alone (an ephemeral container, from a Secret)", envSpread{ephemeral: []envEntry{envFromSecret("BETA")}}},
		{"ALPHA and BETA (a container and an ephemeral container)", envSpread{
			containers: []envEntry{envNameOnly("ALPHA")}, ephemeral: []envEntry{envLiteral("BETA", "2")}}},
		{"ALPHA and GAMMA (an ephemeral and an init container)", envSpread{
			ephemeral: []envEntry{envLiteral("ALPHA", "")}, initContainers: []envEntry{envLiteral("GAMMA", "3")}}},
		{"GAMMA alone (a container)", envSpread{containers: []envEntry{envFromConfigMap("GAMMA")}}},
	}
	const (
		noneOf  = "it sets none of ALPHA, BETA; at least one of them is required"
		allOf   = "it sets all of ALPHA, BETA together, which this rule forbids"
		alphaIn = "it sets ALPHA, which this rule forbids"
	)
	// want[row][operator] is the detail of the refusal, "" = admitted.
	ops := []string{"anyIn", "allAreUsed", "anyNotIn", "notAllAreUsed"}
	want := [][4]string{
		{"", "", noneOf, ""},
		{alphaIn, "", "", "it sets ALPHA but not BETA; set all of them or none"},
		{"it sets BETA, which this rule forbids", "", "", "it sets BETA but not ALPHA; set all of them or none"},
		{"it sets ALPHA, BETA, which this rule forbids", allOf, "", ""},
		{alphaIn, "", "", "it sets ALPHA but not BETA; set all of them or none"},
		{"", "", noneOf, ""},
	}
	var cases []envTruthCase
	for i, row := range rows {
		for j, op := range ops {
			c := envTruthCase{reject: op, listed: envListedAB, spread: row.spread}
			if want[i][j] == "" {
				c.name = "§4.1 " + op + " admits " + row.name
			} else {
				c.name = "§4.1 " + op + " rejects " + row.name
				c.denial = deny(op, want[i][j])
			}
			cases = append(cases, c)
		}
	}

	const (
		logValued = "LOG_LEVEL (with the listed value)"
		traceIn   = "it sets TRACE, which this rule forbids"
	)
	valued := []envTruthCase{
		// §4.2, anyIn.
		{name: "§4.2 anyIn admits LOG_LEVEL=info", reject: "anyIn",
			spread: envSpread{containers: []envEntry{envLiteral("LOG_LEVEL", "info")}}},
		{name: "§4.2 anyIn rejects LOG_LEVEL=debug", reject: "anyIn",
			spread: envSpread{initContainers: []envEntry{envLiteral("LOG_LEVEL", "debug")}},
			denial: deny("anyIn", "it sets "+logValued+", which this rule forbids")},
		{name: "§4.2 anyIn admits LOG_LEVEL from a Secret", reject: "anyIn",
			spread: envSpread{ephemeral: []envEntry{envFromSecret("LOG_LEVEL")}}},
		{name: "§4.2 anyIn rejects TRACE from a ConfigMap", reject: "anyIn",
			spread: envSpread{containers: []envEntry{envFromConfigMap("TRACE")}}, denial: deny("anyIn", traceIn)},
		{name: "§4.2 anyIn rejects TRACE set to the empty string", reject: "anyIn",
			spread: envSpread{initContainers: []envEntry{envLiteral("TRACE", "")}}, denial: deny("anyIn", traceIn)},
		{name: "§4.2 anyIn rejects TRACE listed without a value", reject: "anyIn",
			spread: envSpread{ephemeral: []envEntry{envNameOnly("TRACE")}}, denial: deny("anyIn", traceIn)},
		{name: "§4.2 anyIn admits an envFrom of a ConfigMap holding TRACE", reject: "anyIn",
			spread: envSpread{envFrom: true}},
		// The same matching under anyNotIn (§4.2's closing sentence).
		{name: "§4.2 anyNotIn rejects LOG_LEVEL=info alone", reject: "anyNotIn",
			spread: envSpread{containers: []envEntry{envLiteral("LOG_LEVEL", "info")}},
			denial: deny("anyNotIn", "it sets none of "+logValued+", TRACE; at least one of them is required")},
		{name: "§4.2 anyNotIn admits LOG_LEVEL=debug alone", reject: "anyNotIn",
			spread: envSpread{ephemeral: []envEntry{envLiteral("LOG_LEVEL", "debug")}}},
		{name: "§4.2 anyNotIn rejects LOG_LEVEL from a Secret, which has no literal to compare", reject: "anyNotIn",
			spread: envSpread{initContainers: []envEntry{envFromSecret("LOG_LEVEL")}},
			denial: deny("anyNotIn", "it sets none of "+logValued+", TRACE; at least one of them is required")},
		{name: "§4.2 anyNotIn rejects a pod with only envFrom", reject: "anyNotIn",
			spread: envSpread{envFrom: true},
			denial: deny("anyNotIn", "it sets none of "+logValued+", TRACE; at least one of them is required")},
		// ... and under the two operators over both listed entries.
		{name: "§4.2 allAreUsed rejects LOG_LEVEL=debug with TRACE from a ConfigMap", reject: "allAreUsed",
			spread: envSpread{containers: []envEntry{envLiteral("LOG_LEVEL", "debug")}, ephemeral: []envEntry{envFromConfigMap("TRACE")}},
			denial: deny("allAreUsed", "it sets all of "+logValued+", TRACE together, which this rule forbids")},
		{name: "§4.2 allAreUsed admits LOG_LEVEL=info with TRACE", reject: "allAreUsed",
			spread: envSpread{containers: []envEntry{envLiteral("LOG_LEVEL", "info")}, initContainers: []envEntry{envNameOnly("TRACE")}}},
		{name: "§4.2 notAllAreUsed rejects LOG_LEVEL=debug without TRACE", reject: "notAllAreUsed",
			spread: envSpread{initContainers: []envEntry{envLiteral("LOG_LEVEL", "debug")}},
			denial: deny("notAllAreUsed", "it sets "+logValued+" but not TRACE; set all of them or none")},
		{name: "§4.2 notAllAreUsed rejects TRACE with LOG_LEVEL from a Secret", reject: "notAllAreUsed",
			spread: envSpread{containers: []envEntry{envFromSecret("LOG_LEVEL")}, ephemeral: []envEntry{envLiteral("TRACE", "x")}},
			denial: deny("notAllAreUsed", "it sets TRACE but not "+logValued+"; set all of them or none")},
		{name: "§4.2 notAllAreUsed admits LOG_LEVEL=debug with TRACE", reject: "notAllAreUsed",
			spread: envSpread{ephemeral: []envEntry{envLiteral("LOG_LEVEL", "debug")}, containers: []envEntry{envNameOnly("TRACE")}}},
	}
	for i := range valued {
		valued[i].listed = envListedValued
	}
	return append(cases, valued...)
}

// TestEnvPolicyTruthTablesHoldThroughTheHTTPFrontDoor sends every cell to
// the HTTPS /validate of a front door that asks a real decider over gRPC.
func TestEnvPolicyTruthTablesHoldThroughTheHTTPFrontDoor(t *testing.T) {
	cluster := loopback.Start(t)
	for _, c := range envTruthTables() {
		t.Run(c.name, func(t *testing.T) {
			_, inst := envInstallation(t, envRuleDocument(c.reject, c.listed))
			cluster.Use(inst, nil)
			got := envValidate(t, cluster, envPodReview(envTeam, envPod(t, envTeam, c.spread)))
			envExpectDenial(t, got, c.denial)
			envExpectDecided(t, got, inst)
		})
	}
}

// TestEnvPolicyTruthTablesHoldThroughInjectReview runs every cell through
// this door's -o review: the pods carry no dynamic-config.rs/
// annotation, so nothing is injected and the policy judges the pod as given.
func TestEnvPolicyTruthTablesHoldThroughInjectReview(t *testing.T) {
	for _, c := range envTruthTables() {
		t.Run(c.name, func(t *testing.T) {
			path, inst := envInstallation(t, envRuleDocument(c.reject, c.listed))
			got := envInject(t, path, envTeam, envPod(t, envTeam, c.spread))
			envExpectDenial(t, got, c.denial)
			envExpectDecided(t, got, inst)
		})
	}
}

// envWorkloadKind is one kind of spec 05 §1 and where its pod spec sits.
type envWorkloadKind struct {
	kind, group, version, resource string
	// spec wraps a pod spec into the kind's spec.
	spec func(podSpec map[string]any) map[string]any
}

func envTemplate(podSpec map[string]any) map[string]any {
	return map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": podSpec}}
}

var envWorkloadKinds = []envWorkloadKind{
	{"Deployment", "apps", "v1", "deployments", envTemplate},
	{"StatefulSet", "apps", "v1", "statefulsets", envTemplate},
	{"DaemonSet", "apps", "v1", "daemonsets", envTemplate},
	{"ReplicaSet", "apps", "v1", "replicasets", envTemplate},
	{"ReplicationController", "", "v1", "replicationcontrollers", envTemplate},
	{"Job", "batch", "v1", "jobs", envTemplate},
	{"CronJob", "batch", "v1", "cronjobs", func(podSpec map[string]any) map[string]any {
		return map[string]any{"schedule": "*/5 * * * *", "jobTemplate": map[string]any{"spec": envTemplate(podSpec)}}
	}},
}

// object is the workload manifest with the given pod spec, labels and
// metadata annotations.
func (k envWorkloadKind) object(t *testing.T, s envSpread, labels, annotations map[string]any) []byte {
	t.Helper()
	apiVersion := k.version
	if k.group != "" {
		apiVersion = k.group + "/" + k.version
	}
	meta := map[string]any{"name": "app", "namespace": "payments"}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return envMarshal(t, map[string]any{"apiVersion": apiVersion, "kind": k.kind, "metadata": meta, "spec": k.spec(s.podSpec())})
}

func (k envWorkloadKind) review(object, oldObject []byte, operation string) envReviewOf {
	return envReviewOf{group: k.group, version: k.version, kind: k.kind, resource: k.resource,
		namespace: "payments", operation: operation, object: object, oldObject: oldObject}
}

var (
	envProxied   = envSpread{containers: []envEntry{envLiteral("NO_PROXY", ".svc")}, initContainers: []envEntry{envLiteral("HTTPS_PROXY", "http://egress:3128")}}
	envCompliant = envSpread{containers: []envEntry{envLiteral("NO_PROXY", ".svc")}, initContainers: []envEntry{envLiteral("HTTP_PROXY_PORT", "3128")}}
)

// envProxyDocument is a rule forbidding HTTPS_PROXY in namespace payments.
func envProxyDocument(targets, mode string) string {
	doc := "envPolicy:\n"
	if targets != "" {
		doc += "  targets: " + targets + "\n"
	}
	doc += "  rules:\n    - environmentVariables:\n        - name: HTTPS_PROXY\n      namespaces: [payments]\n"
	if mode != "" {
		doc += "      mode: " + mode + "\n"
	}
	return doc
}

func envProxyDenial(kind string) string {
	return `envPolicy.rules[0] (anyIn) rejects this ` + kind + ` in namespace "payments": it sets HTTPS_PROXY, which this rule forbids`
}

// TestEnvPolicyJudgesEveryWorkloadKindThroughTheHTTPFrontDoor covers spec 05
// §1 for workloads through /validate: the pod template is read where each
// kind keeps it, UPDATE without an env change passes without an RPC, the
// three modes, and the workload-annotation warning.
func TestEnvPolicyJudgesEveryWorkloadKindThroughTheHTTPFrontDoor(t *testing.T) {
	cluster := loopback.Start(t)
	_, enforce := envInstallation(t, envProxyDocument("", ""))
	_, warn := envInstallation(t, envProxyDocument("", "warn"))
	_, audit := envInstallation(t, envProxyDocument("", "audit"))
	relabelled := map[string]any{"team": "web"}

	for _, k := range envWorkloadKinds {
		violating := k.object(t, envProxied, nil, nil)
		compliant := k.object(t, envCompliant, nil, nil)
		tests := []struct {
			name    string
			inst    *installation.Installation
			review  envReviewOf
			denial  string
			warning string
			audit   string
			noRPC   bool
		}{
			{name: "a " + k.kind + " whose template sets a forbidden variable is refused",
				inst: enforce, review: k.review(violating, nil, "CREATE"), denial: envProxyDenial(k.kind)},
			{name: "its compliant twin is allowed",
				inst: enforce, review: k.review(compliant, nil, "CREATE")},
			{name: "an UPDATE that adds the forbidden variable is refused",
				inst: enforce, review: k.review(violating, compliant, "UPDATE"), denial: envProxyDenial(k.kind)},
			{name: "an UPDATE that leaves the env unchanged is allowed without asking the decider",
				inst: enforce, review: k.review(k.object(t, envProxied, relabelled, nil), violating, "UPDATE"), noRPC: true},
			{name: "warn mode admits it with the warning",
				inst: warn, review: k.review(violating, nil, "CREATE"),
				warning: `envPolicy.rules[0] (anyIn, warn) would reject this ` + k.kind + ` in namespace "payments": it sets HTTPS_PROXY, which this rule forbids`},
			{name: "audit mode admits it with the env-policy-rule-0 audit annotation",
				inst: audit, review: k.review(violating, nil, "CREATE"), audit: "would reject: it sets HTTPS_PROXY, which this rule forbids"},
			{name: "its own dynamic-config.rs/ annotations draw the workload-annotations warning",
				inst: enforce, review: k.review(k.object(t, envCompliant, nil, map[string]any{"dynamic-config.rs/inject": "true"}), nil, "CREATE"),
				warning: "dynamic-config.rs annotations on a " + k.kind + " do nothing: the injection reads the pod, so put them under spec.template.metadata.annotations"},
		}
		for _, tt := range tests {
			t.Run(k.kind+": "+tt.name, func(t *testing.T) {
				cluster.Use(tt.inst, nil)
				got := envValidate(t, cluster, tt.review)
				if tt.warning != "" || tt.audit != "" {
					if !got.Allowed || got.Status != nil {
						t.Fatalf("want allowed, got %s", review.Encode(got))
					}
				} else {
					envExpectDenial(t, got, tt.denial)
				}
				if tt.noRPC {
					if len(got.AuditAnnotations) != 0 {
						t.Errorf("the decider was asked: %s", review.Encode(got))
					}
					return
				}
				envExpectDecided(t, got, tt.inst)
				if tt.warning != "" && (len(got.Warnings) != 1 || got.Warnings[0] != tt.warning) {
					t.Errorf("warnings %q, want [%q]", got.Warnings, tt.warning)
				}
				if tt.audit != "" && (got.AuditAnnotations["env-policy-rule-0"] != tt.audit || len(got.AuditAnnotations) != 3 || len(got.Warnings) != 0) {
					t.Errorf("audit annotations %v, warnings %q; want env-policy-rule-0 = %q, the revision and the decision id only", got.AuditAnnotations, got.Warnings, tt.audit)
				}
			})
		}
	}
}

// TestEnvPolicyJudgesPodsAndTargetsThroughTheHTTPFrontDoor covers the Pod
// side of spec 05 §1: the ephemeral-containers subresource, a Pod's own
// annotations (no workload warning), and targets [pods] / [workloads].
func TestEnvPolicyJudgesPodsAndTargetsThroughTheHTTPFrontDoor(t *testing.T) {
	cluster := loopback.Start(t)
	_, both := envInstallation(t, envProxyDocument("", ""))
	_, pods := envInstallation(t, envProxyDocument("[pods]", ""))
	_, workloads := envInstallation(t, envProxyDocument("[workloads]", ""))
	deployment := envWorkloadKinds[0]

	plain := envPod(t, "payments", envCompliant)
	debugged := envPod(t, "payments", envSpread{containers: envCompliant.containers, ephemeral: []envEntry{envLiteral("HTTPS_PROXY", "http://egress:3128")}})
	quietDebug := envPod(t, "payments", envSpread{containers: envCompliant.containers, ephemeral: []envEntry{}})
	ephemeral := func(object []byte) envReviewOf {
		r := envPodReview("payments", object)
		r.subResource, r.operation, r.oldObject = "ephemeralcontainers", "UPDATE", plain
		return r
	}
	annotatedPod := envMarshal(t, map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "app", "namespace": "payments", "annotations": map[string]any{"dynamic-config.rs/inject": "false"}},
		"spec":     envCompliant.podSpec()})

	tests := []struct {
		name   string
		inst   *installation.Installation
		review envReviewOf
		denial string
	}{
		{"a debug container with a forbidden variable, added through pods/ephemeralcontainers, is refused",
			both, ephemeral(debugged), envProxyDenial("Pod")},
		{"a debug container without env, added through pods/ephemeralcontainers, is allowed",
			both, ephemeral(quietDebug), ""},
		{"a Pod created with a violating ephemeral container is refused",
			both, envPodReview("payments", debugged), envProxyDenial("Pod")},
		{"a Pod's own dynamic-config.rs/ annotations draw no workload warning",
			both, envPodReview("payments", annotatedPod), ""},
		{"targets [pods] refuses a violating Pod",
			pods, envPodReview("payments", envPod(t, "payments", envProxied)), envProxyDenial("Pod")},
		{"targets [pods] lets a violating Deployment through",
			pods, deployment.review(deployment.object(t, envProxied, nil, nil), nil, "CREATE"), ""},
		{"targets [workloads] refuses a violating Deployment",
			workloads, deployment.review(deployment.object(t, envProxied, nil, nil), nil, "CREATE"), envProxyDenial("Deployment")},
		{"targets [workloads] lets a violating Pod through",
			workloads, envPodReview("payments", envPod(t, "payments", envProxied)), ""},
		{"a rule scoped to payments lets a violating Pod in another namespace through",
			both, envPodReview("team-a", envPod(t, "team-a", envProxied)), ""},
		{"a dry-run Deployment is judged like any other",
			both, func() envReviewOf {
				r := deployment.review(deployment.object(t, envProxied, nil, nil), nil, "CREATE")
				r.dryRun = true
				return r
			}(), envProxyDenial("Deployment")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster.Use(tt.inst, nil)
			got := envValidate(t, cluster, tt.review)
			envExpectDenial(t, got, tt.denial)
			envExpectDecided(t, got, tt.inst)
		})
	}
}

// TestEnvPolicyRefusesAnInjectedPodForItsFleetAgentEnv is spec 05 §6/§8:
// Pods are judged after mutation, so a fleet agentEnv variable that an
// anyIn rule lists refuses every injected pod — on /validate (the mutated
// pod, as the API server sends it) and through inject.
func TestEnvPolicyRefusesAnInjectedPodForItsFleetAgentEnv(t *testing.T) {
	const policy = "envPolicy:\n  rules:\n    - reject: anyIn\n      environmentVariables:\n        - name: HTTPS_PROXY\n"
	annotated := envMarshal(t, map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "app", "namespace": envTeam, "annotations": map[string]any{
			"dynamic-config.rs/inject":   "true",
			"dynamic-config.rs/source":   "consul",
			"dynamic-config.rs/endpoint": "http://consul:8500",
			"dynamic-config.rs/key":      "myapp/config.json",
			"dynamic-config.rs/path":     "/config/rendered.toml",
		}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1"}}}})
	denial := `envPolicy.rules[0] (anyIn) rejects this Pod in namespace "team-a": it sets HTTPS_PROXY, which this rule forbids`

	tests := []struct {
		name     string
		document string
		pod      []byte
		denial   string
	}{
		{"an injected pod whose fleet agentEnv sets HTTPS_PROXY is refused",
			"agentEnv: \"HTTPS_PROXY=http://egress.infra.svc:3128, RUST_LOG=info\"\n" + policy, annotated, denial},
		{"an injected pod whose fleet agentEnv sets other variables is allowed",
			"agentEnv: \"RUST_LOG=info\"\n" + policy, annotated, ""},
		{"a pod that asks for no injection is allowed under the same fleet agentEnv",
			"agentEnv: \"HTTPS_PROXY=http://egress.infra.svc:3128\"\n" + policy, envPod(t, envTeam, envSpread{}), ""},
	}
	cluster := loopback.Start(t)
	for _, tt := range tests {
		t.Run(tt.name+" on /validate", func(t *testing.T) {
			_, inst := envInstallation(t, tt.document)
			cluster.Use(inst, nil)
			mutate, _, err := cluster.Door(handler.PathMutate, envPodReview(envTeam, tt.pod).body(t))
			if err != nil {
				t.Fatal(err)
			}
			if !mutate.Allowed {
				t.Fatalf("/mutate refused: %s", review.Encode(mutate))
			}
			mutated := tt.pod
			if mutate.Patch != "" {
				patch, err := base64.StdEncoding.DecodeString(mutate.Patch)
				if err != nil {
					t.Fatal(err)
				}
				if mutated, err = jsonpatch.Apply(tt.pod, patch); err != nil {
					t.Fatal(err)
				}
			}
			if injected := mutate.Patch != ""; injected != bytes.Contains(tt.pod, []byte(`"dynamic-config.rs/inject":"true"`)) {
				t.Fatalf("injected=%v: %s", injected, review.Encode(mutate))
			}
			got := envValidate(t, cluster, envPodReview(envTeam, mutated))
			envExpectDenial(t, got, tt.denial)
			envExpectDecided(t, got, inst)
		})
		t.Run(tt.name+" by inject -o review", func(t *testing.T) {
			path, inst := envInstallation(t, tt.document)
			got := envInject(t, path, envTeam, tt.pod)
			if tt.denial == "" {
				wantsAgent := bytes.Contains(tt.pod, []byte(`"dynamic-config.rs/inject":"true"`))
				if !got.Allowed || got.Status != nil || (got.Patch != "") != wantsAgent {
					t.Fatalf("want allowed (injected: %v), got %s", wantsAgent, review.Encode(got))
				}
				return
			}
			envExpectDenial(t, got, tt.denial)
			envExpectDecided(t, got, inst)
		})
	}
}

// TestEnvPolicyRefusalCarriesEarlierFindingsThroughTheHTTPFrontDoor: an
// enforce refusal also carries the warnings and audit annotations of the
// warn and audit rules before it (spec 05 §4.3 step 4), as the API server
// receives them.
func TestEnvPolicyRefusalCarriesEarlierFindingsThroughTheHTTPFrontDoor(t *testing.T) {
	const document = "envPolicy:\n  rules:\n" +
		"    - environmentVariables: [{name: HTTPS_PROXY}]\n      mode: warn\n" +
		"    - reject: anyNotIn\n      environmentVariables: [{name: LOG_LEVEL}]\n      mode: audit\n" +
		"    - reject: allAreUsed\n      environmentVariables: [{name: HTTPS_PROXY}, {name: NO_PROXY}]\n" +
		"    - environmentVariables: [{name: NO_PROXY}]\n      mode: warn\n"
	cluster := loopback.Start(t)
	_, inst := envInstallation(t, document)
	cluster.Use(inst, nil)
	tests := []struct {
		name     string
		spread   envSpread
		denial   string
		warnings []string
		audit    map[string]string
	}{
		{
			name:     "a refusal carries the warning and the audit annotation collected before it, and nothing after it",
			spread:   envProxied,
			denial:   `envPolicy.rules[2] (allAreUsed) rejects this Pod in namespace "payments": it sets all of HTTPS_PROXY, NO_PROXY together, which this rule forbids`,
			warnings: []string{`envPolicy.rules[0] (anyIn, warn) would reject this Pod in namespace "payments": it sets HTTPS_PROXY, which this rule forbids`},
			audit:    map[string]string{"env-policy-rule-1": "would reject: it sets none of LOG_LEVEL; at least one of them is required", "revision": inst.Revision},
		},
		{
			name:     "without the enforce failure the later warn rule speaks too",
			spread:   envSpread{containers: []envEntry{envLiteral("NO_PROXY", ".svc"), envLiteral("LOG_LEVEL", "info")}},
			warnings: []string{`envPolicy.rules[3] (anyIn, warn) would reject this Pod in namespace "payments": it sets NO_PROXY, which this rule forbids`},
			audit:    map[string]string{"revision": inst.Revision},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := envValidate(t, cluster, envPodReview("payments", envPod(t, "payments", tt.spread)))
			if tt.denial != "" {
				want := review.Status{Code: envDoorCode, Message: tt.denial, Reason: envDoorSlug}
				if got.Allowed || got.Status == nil || *got.Status != want {
					t.Errorf("want refused %+v, got %s", want, review.Encode(got))
				}
			} else if !got.Allowed || got.Status != nil {
				t.Errorf("want allowed, got %s", review.Encode(got))
			}
			if strings.Join(got.Warnings, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings %q, want %q", got.Warnings, tt.warnings)
			}
			if got.AuditAnnotations["decision-id"] == "" || len(got.AuditAnnotations) != len(tt.audit)+1 {
				t.Errorf("audit annotations %v, want %v", got.AuditAnnotations, tt.audit)
			}
			for k, v := range tt.audit {
				if got.AuditAnnotations[k] != v {
					t.Errorf("audit annotation %s = %q, want %q", k, got.AuditAnnotations[k], v)
				}
			}
		})
	}
}
