package resolve

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// checkCase is one refusal: the installation, the pod, and the exact refusal.
type checkCase struct {
	name    string
	doc     string
	env     []string
	pod     *decision.Facts
	check   string
	key     string
	render  string
	message string
}

// with applies changes to a pod's facts.
func with(f *decision.Facts, change func(*decision.Facts)) *decision.Facts {
	change(f)
	return f
}

// in puts a pod in a namespace.
func in(ns string, f *decision.Facts) *decision.Facts { f.Namespace = ns; return f }

// cachePod is consulPod plus a complete named render "cache" from redis.
func cachePod(extra ...string) *decision.Facts {
	return consulPod(append([]string{"source.cache", "redis", "endpoint.cache", "redis://redis:6379",
		"key.cache", "myapp/cache.json", "path.cache", "/config/cache.json"}, extra...)...)
}

// wantSlug is spec 04 §2, written out independently of the code under test.
func wantSlug(check string) (decision.Reason, string, int32) {
	switch {
	case strings.HasPrefix(check, "pin.") || strings.HasPrefix(check, "pair-pin."):
		return decision.ReasonPinned, "DynamicConfigPinned", 400
	case check == "class.disabled":
		return decision.ReasonPolicy, "DynamicConfigPolicy", 403
	case check == "gate.source-deny" || check == "gate.source-allow" || check == "gate.agent-env":
		return decision.ReasonPolicy, "DynamicConfigPolicy", 400
	case check == "conflict.container" || check == "conflict.volume" || check == "conflict.mount-path":
		return decision.ReasonConflict, "DynamicConfigConflict", 400
	}
	return decision.ReasonMalformed, "DynamicConfigMalformed", 400
}

const advice = `; the installer can reopen it with a trailing "?" or overridable "true"`

// gateDoc is the gates example of spec 02 §9 plus the agent-env allowlist of §8.
const gateDoc = `
sourceAllow: "payments: vault, s3; *: consul"
sourceDeny: "sandbox: git"
agentEnvAllow: "payments: HTTPS_PROXY, AWS_*; *: RUST_LOG"
agentEnv: "HTTPS_PROXY=http://egress.infra.svc:3128, RUST_LOG=info"
`

func storePod(store string, extra ...string) *decision.Facts {
	return facts(append([]string{"inject", "true", "source", store, "endpoint", "e://x", "key", "k",
		"path", "/config/app.json"}, extra...)...)
}

// checkCases hold at least one case for every check id of spec 01 §8.
var checkCases = []checkCase{
	// B3–B7
	{name: "a class is refused whatever it names", pod: consulPod("class", "gold"), check: "class.disabled", key: "dynamic-config.rs/class",
		message: `dynamic-config.rs/class is "gold", but classes are not enabled in this installation (webhook.classes.enabled): name the store with dynamic-config.rs/source and its address with dynamic-config.rs/endpoint instead`},
	{name: "a class is refused before inject is even read", pod: facts("class", ""), check: "class.disabled", key: "dynamic-config.rs/class",
		message: `dynamic-config.rs/class is "", but classes are not enabled in this installation (webhook.classes.enabled): name the store with dynamic-config.rs/source and its address with dynamic-config.rs/endpoint instead`},
	{name: "a copied status mark without an agent is refused", pod: consulPod("status", "injected"), check: "status.no-agent", key: "dynamic-config.rs/status",
		message: `dynamic-config.rs/status is "injected" but this pod carries no injected container (dynamic-config-agent or dynamic-config-init): the mark is the webhook's, and a copied manifest kept it without what it stood for — drop the annotation`},
	{name: "a status the pod set itself is refused even without inject", pod: facts("status", "done"), check: "status.value", key: "dynamic-config.rs/status",
		message: `dynamic-config.rs/status is "done", and it is not a pod's to set: the webhook writes it — drop the annotation`},
	{name: "inject yes is refused", pod: facts("inject", "yes"), check: "inject.value", key: "dynamic-config.rs/inject",
		message: `dynamic-config.rs/inject is "yes": "true" or "false"`},
	{name: "inject empty is refused with its own message", pod: facts("inject", ""), check: "inject.value", key: "dynamic-config.rs/inject",
		message: `dynamic-config.rs/inject is "": "true" or "false"`},
	{name: "the first unknown key in byte order is reported", pod: consulPod("zz", "1", "mode.cache", "x", "status.x", "y"), check: "key.unknown", key: "dynamic-config.rs/mode.cache",
		message: `dynamic-config.rs/mode.cache is not part of the contract; check its spelling against the annotation reference (a named render's key is <key>.<name>, with a name of 1-32 characters from a-z, 0-9 and "-")`},
	{name: "an uppercase render suffix is an unknown key", pod: consulPod("key.Cache", "x"), check: "key.unknown", key: "dynamic-config.rs/key.Cache",
		message: `dynamic-config.rs/key.Cache is not part of the contract; check its spelling against the annotation reference (a named render's key is <key>.<name>, with a name of 1-32 characters from a-z, 0-9 and "-")`},
	{name: "an unknown key two edits from a registry key is told which one", pod: consulPod("wacth-second", "10"), check: "key.unknown", key: "dynamic-config.rs/wacth-second",
		message: `dynamic-config.rs/wacth-second is not part of the contract: did you mean dynamic-config.rs/watch-seconds?`},
	{name: "a misspelt per-render key keeps its render suffix in the suggestion", pod: cachePod("endpiont.cache", "x"), check: "key.unknown", key: "dynamic-config.rs/endpiont.cache",
		message: `dynamic-config.rs/endpiont.cache is not part of the contract: did you mean dynamic-config.rs/endpoint.cache?`},
	{name: "the first empty value in byte order is reported", pod: consulPod("section", "", "also.x", ""), check: "value.empty", key: "dynamic-config.rs/also.x",
		message: `dynamic-config.rs/also.x is empty: give it a value or drop it`},
	{name: "an empty named-render value names its render", pod: cachePod("section.cache", ""), check: "value.empty", key: "dynamic-config.rs/section.cache", render: "cache",
		message: `dynamic-config.rs/section.cache is empty: give it a value or drop it`},

	// B8–B11
	{name: "a source outside the nine is refused", pod: consulPod("source", "Consul"), check: "source.value", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is "Consul": one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3`},
	{name: "a pinned fleet source refuses another store", doc: `source: "vault!"`, pod: consulPod(), check: "pin.source", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is "consul", but the installation pins it to "vault" — match it or drop the annotation` + advice},
	{name: "a pinned store endpoint refuses a differing annotation", doc: "storeDefaults:\n  consul: \"endpoint=http://c:8500!\"", pod: consulPod(), check: "pin.endpoint", key: "dynamic-config.rs/endpoint",
		message: `dynamic-config.rs/endpoint is "http://consul:8500", but the installation pins it to "http://c:8500" — match it or drop the annotation` + advice},
	{name: "a pinned fleet path refuses a differing path", doc: `path: "/config/app.json!"`, pod: consulPod(), check: "pin.path", key: "dynamic-config.rs/path",
		message: `dynamic-config.rs/path is "/config/rendered.toml", but the installation pins it to "/config/app.json" — match it or drop the annotation` + advice},
	{name: "a pinned store endpoint-secret refuses the endpoint half", doc: "storeDefaults:\n  consul: \"endpoint-secret=consul-addr/url!\"", pod: consulPod(), check: "pair-pin.endpoint", key: "dynamic-config.rs/endpoint",
		message: `dynamic-config.rs/endpoint is set, but the installation pins dynamic-config.rs/endpoint-secret to "consul-addr/url" — the pair answers as one: drop dynamic-config.rs/endpoint`},
	{name: "a pinned template-configmap refuses an inline template", doc: "storeDefaults:\n  consul: \"template-configmap=tpl!\"", pod: consulPod("template", "{{ . }}"), check: "pair-pin.template", key: "dynamic-config.rs/template",
		message: `dynamic-config.rs/template is set, but the installation pins dynamic-config.rs/template-configmap to "tpl" — the pair answers as one: drop dynamic-config.rs/template`},

	// B12–B14
	{name: "mode is case-sensitive", pod: consulPod("mode", "Both"), check: "mode.value", key: "dynamic-config.rs/mode",
		message: `dynamic-config.rs/mode is "Both": init, sidecar or both`},
	{name: "a pinned fleet mode refuses another mode", doc: `mode: "init!"`, pod: consulPod("mode", "sidecar"), check: "pin.mode", key: "dynamic-config.rs/mode",
		message: `dynamic-config.rs/mode is "sidecar", but the installation pins it to "init" — match it or drop the annotation` + advice},
	{name: "watch-seconds with a unit is refused", pod: consulPod("watch-seconds", "1m"), check: "watch-seconds.value", key: "dynamic-config.rs/watch-seconds",
		message: `dynamic-config.rs/watch-seconds is "1m": whole seconds`},
	{name: "a pinned watch-seconds is shown in canonical form", doc: `watchSeconds: "030!"`, pod: consulPod("watch-seconds", "31"), check: "pin.watch-seconds", key: "dynamic-config.rs/watch-seconds",
		message: `dynamic-config.rs/watch-seconds is "31", but the installation pins it to "30" — match it or drop the annotation` + advice},
	{name: "a token-secret without a key is refused", pod: consulPod("token-secret", "vault-token", "tls-secret", "a/b"), check: "secret-ref.form", key: "dynamic-config.rs/token-secret",
		message: `dynamic-config.rs/token-secret is "vault-token": the form is <secret-name>/<key>`},
	{name: "a ca-configmap with an empty key is refused", pod: consulPod("ca-configmap", "ca/"), check: "object-ref.form", key: "dynamic-config.rs/ca-configmap",
		message: `dynamic-config.rs/ca-configmap is "ca/": the form is <configmap-name> or <configmap-name>/<key>`},
	{name: "an ssh-secret without a name is refused with the secret form", pod: consulPod("ssh-secret", "/id"), check: "object-ref.form", key: "dynamic-config.rs/ssh-secret",
		message: `dynamic-config.rs/ssh-secret is "/id": the form is <secret-name> or <secret-name>/<key>`},
	{name: "a tls-secret with a slash is refused", pod: consulPod("tls-secret", "a/b"), check: "secret-name.form", key: "dynamic-config.rs/tls-secret",
		message: `dynamic-config.rs/tls-secret is "a/b": a Secret name, without "/"`},

	// B15–B18
	{name: "a pod naming no store is told to name one for the endpoint", pod: facts("inject", "true"), check: "endpoint.required", key: "dynamic-config.rs/endpoint",
		message: `dynamic-config.rs/endpoint is required: set dynamic-config.rs/endpoint or dynamic-config.rs/endpoint-secret on the pod — and name the store with dynamic-config.rs/source, since no per-store default can answer without one`},
	{name: "a pod naming a store is told about per-store defaults", pod: facts("inject", "true", "source", "consul"), check: "endpoint.required", key: "dynamic-config.rs/endpoint",
		message: `dynamic-config.rs/endpoint is required: set dynamic-config.rs/endpoint or dynamic-config.rs/endpoint-secret on the pod, or give the store a per-store default endpoint (agent.defaults.perStore)`},
	{name: "both endpoint halves on the pod are refused", pod: consulPod("endpoint-secret", "e/url"), check: "endpoint.both", key: "dynamic-config.rs/endpoint",
		message: `dynamic-config.rs/endpoint and dynamic-config.rs/endpoint-secret are both set: one address, one place — keep one`},
	{name: "an ssh key with another auth is refused", pod: storePod("git", "ssh-secret", "deploy-key/id", "auth", "token"), check: "ssh-secret.auth", key: "dynamic-config.rs/ssh-secret",
		message: `dynamic-config.rs/ssh-secret (deploy-key) with auth "token": an ssh key is auth "ssh-key"`},
	{name: "a store default ssh key with another auth is refused", doc: "storeDefaults:\n  git: \"ssh-secret=deploy-key\"", pod: storePod("git", "auth", "token"), check: "ssh-secret.auth", key: "dynamic-config.rs/auth",
		message: `the store default ssh-secret (deploy-key) with auth "token": an ssh key is auth "ssh-key"`},
	{name: "tls-skip-verify yes is refused", pod: consulPod("tls-skip-verify", "yes"), check: "bool.value", key: "dynamic-config.rs/tls-skip-verify",
		message: `dynamic-config.rs/tls-skip-verify is "yes": "true" or "false"`},
	{name: "tls-skip-verify is refused when the installation does not offer it", pod: consulPod("tls-skip-verify", "true"), check: "tls-skip-verify.not-offered", key: "dynamic-config.rs/tls-skip-verify",
		message: `dynamic-config.rs/tls-skip-verify is "true", which is not available in this installation: the installer opens it with webhook.allowTlsSkipVerify: true`},
	{name: "tls-skip-verify with a CA is contradictory", env: []string{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true"}, pod: consulPod("tls-skip-verify", "true", "ca-configmap", "ca"), check: "tls-skip-verify.with-ca", key: "dynamic-config.rs/tls-skip-verify",
		message: `dynamic-config.rs/tls-skip-verify is "true" while dynamic-config.rs/ca-configmap is set: contradictory — trust that CA, or trust nothing, not both`},
	{name: "tls-skip-verify with a store default CA is contradictory", doc: "storeDefaults:\n  consul: \"ca-configmap=ca\"", env: []string{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true"}, pod: consulPod("tls-skip-verify", "true"), check: "tls-skip-verify.with-ca", key: "dynamic-config.rs/tls-skip-verify",
		message: `dynamic-config.rs/tls-skip-verify is "true" while the store default ca-configmap is set: contradictory — trust that CA, or trust nothing, not both`},

	// B19–B23
	{name: "volume-medium tmpfs is refused", pod: consulPod("volume-medium", "tmpfs"), check: "volume-medium.value", key: "dynamic-config.rs/volume-medium",
		message: `dynamic-config.rs/volume-medium is "tmpfs": memory (default) or disk`},
	{name: "a pinned volume medium refuses memory", doc: `volumeMedium: "disk!"`, pod: consulPod("volume-medium", "memory"), check: "pin.volume-medium", key: "dynamic-config.rs/volume-medium",
		message: `dynamic-config.rs/volume-medium is "memory", but the installation pins it to "disk" — match it or drop the annotation` + advice},
	{name: "native-sidecar 1 is refused", pod: consulPod("native-sidecar", "1"), check: "bool.value", key: "dynamic-config.rs/native-sidecar",
		message: `dynamic-config.rs/native-sidecar is "1": "true" or "false"`},
	{name: "a pinned native sidecar refuses false", doc: `nativeSidecar: "true!"`, pod: consulPod("native-sidecar", "false"), check: "pin.native-sidecar", key: "dynamic-config.rs/native-sidecar",
		message: `dynamic-config.rs/native-sidecar is "false", but the installation pins it to "true" — match it or drop the annotation` + advice},
	{name: "a pinned cpu request compares raw strings", doc: `cpuRequest: "100m!"`, pod: consulPod("agent-cpu-request", "0.1"), check: "pin.agent-cpu-request", key: "dynamic-config.rs/agent-cpu-request",
		message: `dynamic-config.rs/agent-cpu-request is "0.1", but the installation pins it to "100m" — match it or drop the annotation` + advice},
	{name: "a pinned memory request is judged before validity", doc: `memoryRequest: "32Mi!"`, pod: consulPod("agent-memory-request", "lots"), check: "pin.agent-memory-request", key: "dynamic-config.rs/agent-memory-request",
		message: `dynamic-config.rs/agent-memory-request is "lots", but the installation pins it to "32Mi" — match it or drop the annotation` + advice},
	{name: "a pinned cpu limit refuses another", doc: `cpuLimit: "1!"`, pod: consulPod("agent-cpu-limit", "2"), check: "pin.agent-cpu-limit", key: "dynamic-config.rs/agent-cpu-limit",
		message: `dynamic-config.rs/agent-cpu-limit is "2", but the installation pins it to "1" — match it or drop the annotation` + advice},
	{name: "a pinned memory limit refuses another", doc: `memoryLimit: "64Mi!"`, pod: consulPod("agent-memory-limit", "128Mi"), check: "pin.agent-memory-limit", key: "dynamic-config.rs/agent-memory-limit",
		message: `dynamic-config.rs/agent-memory-limit is "128Mi", but the installation pins it to "64Mi" — match it or drop the annotation` + advice},
	{name: "an ephemeral request that is no quantity is refused", pod: consulPod("agent-ephemeral-request", "lots", "agent-ephemeral-limit", "x"), check: "quantity.value", key: "dynamic-config.rs/agent-ephemeral-request",
		message: `dynamic-config.rs/agent-ephemeral-request is "lots": a Kubernetes quantity, like "50m" or "64Mi"`},
	{name: "an ephemeral request above its limit is refused", pod: consulPod("agent-ephemeral-request", "2Gi", "agent-ephemeral-limit", "1.5Gi"), check: "agent-ephemeral.request-above-limit", key: "dynamic-config.rs/agent-ephemeral-request",
		message: `dynamic-config.rs/agent-ephemeral-request is "2Gi", above dynamic-config.rs/agent-ephemeral-limit "1.5Gi": a request cannot exceed its limit`},
	{name: "a cpu request with a space is refused", pod: consulPod("agent-cpu-request", "1 core"), check: "quantity.value", key: "dynamic-config.rs/agent-cpu-request",
		message: `dynamic-config.rs/agent-cpu-request is "1 core": a Kubernetes quantity, like "50m" or "64Mi"`},
	{name: "a cpu request above the pod's limit is refused", pod: consulPod("agent-cpu-request", "2", "agent-cpu-limit", "1500m"), check: "agent-cpu.request-above-limit", key: "dynamic-config.rs/agent-cpu-request",
		message: `dynamic-config.rs/agent-cpu-request is "2", above the cpu limit "1500m" from the pod: a request cannot exceed its limit`},
	{name: "a memory request above the built-in limit is refused", pod: consulPod("agent-memory-request", "128Mi"), check: "agent-memory.request-above-limit", key: "dynamic-config.rs/agent-memory-request",
		message: `dynamic-config.rs/agent-memory-request is "128Mi", above the memory limit "64Mi" from the built-in default: a request cannot exceed its limit`},
	{name: "a memory limit below the built-in request is refused from the limit's side", pod: consulPod("agent-memory-limit", "16Mi"), check: "agent-memory.request-above-limit", key: "dynamic-config.rs/agent-memory-limit",
		message: `dynamic-config.rs/agent-memory-limit is "16Mi", below the memory request "32Mi" from the built-in default: a request cannot exceed its limit`},
	{name: "a memory request above the store default limit names the store", doc: "storeDefaults:\n  consul: \"agent-memory-limit=128Mi\"", pod: consulPod("agent-memory-request", "256Mi"), check: "agent-memory.request-above-limit", key: "dynamic-config.rs/agent-memory-request",
		message: `dynamic-config.rs/agent-memory-request is "256Mi", above the memory limit "128Mi" from the store default for "consul": a request cannot exceed its limit`},
	{name: "a cpu limit below the fleet request names the fleet", doc: `cpuRequest: "500m"`, pod: consulPod("agent-cpu-limit", "250m"), check: "agent-cpu.request-above-limit", key: "dynamic-config.rs/agent-cpu-limit",
		message: `dynamic-config.rs/agent-cpu-limit is "250m", below the cpu request "500m" from the fleet default: a request cannot exceed its limit`},

	// B24–B26
	{name: "a file mode that is not octal is refused", pod: consulPod("file-mode", "rw-r-----"), check: "file-mode.value", key: "dynamic-config.rs/file-mode",
		message: `dynamic-config.rs/file-mode is "rw-r-----": octal, like "0640"`},
	{name: "a file mode above 0777 is refused", pod: consulPod("file-mode", "1644"), check: "file-mode.range", key: "dynamic-config.rs/file-mode",
		message: `dynamic-config.rs/file-mode is "1644": at most 0777 — permission bits only`},
	{name: "a file mode the owner cannot read is refused", pod: consulPod("file-mode", "0o044"), check: "file-mode.owner-read", key: "dynamic-config.rs/file-mode",
		message: `dynamic-config.rs/file-mode is "0o044": the owner must at least read it (0400 set)`},
	{name: "a pinned file mode is shown normalised", doc: `fileMode: "640!"`, pod: consulPod("file-mode", "0600"), check: "pin.file-mode", key: "dynamic-config.rs/file-mode",
		message: `dynamic-config.rs/file-mode is "0600", but the installation pins it to "0640" — match it or drop the annotation` + advice},
	{name: "a UID that is no number is refused", pod: consulPod("agent-run-as-user", "nobody"), check: "run-as.value", key: "dynamic-config.rs/agent-run-as-user",
		message: `dynamic-config.rs/agent-run-as-user is "nobody": a numeric UID/GID`},
	{name: "UID 0 is refused with a bare zero", pod: consulPod("agent-run-as-user", "00"), check: "run-as.root", key: "dynamic-config.rs/agent-run-as-user",
		message: `dynamic-config.rs/agent-run-as-user is 0: the agent stays nonroot in every configuration`},
	{name: "a GID above the API limit is refused", pod: consulPod("agent-run-as-group", "2147483648"), check: "run-as.value", key: "dynamic-config.rs/agent-run-as-group",
		message: `dynamic-config.rs/agent-run-as-group is "2147483648": a numeric UID/GID`},
	{name: "a pinned UID refuses another", doc: `runAsUser: "1000!"`, pod: consulPod("agent-run-as-user", "2000"), check: "pin.agent-run-as-user", key: "dynamic-config.rs/agent-run-as-user",
		message: `dynamic-config.rs/agent-run-as-user is "2000", but the installation pins it to "1000" — match it or drop the annotation` + advice},
	{name: "a pinned GID refuses another", doc: `runAsGroup: "1000!"`, pod: consulPod("agent-run-as-group", "2000"), check: "pin.agent-run-as-group", key: "dynamic-config.rs/agent-run-as-group",
		message: `dynamic-config.rs/agent-run-as-group is "2000", but the installation pins it to "1000" — match it or drop the annotation` + advice},
	{name: "same-user 1 is refused", pod: consulPod("agent-run-as-same-user", "1"), check: "bool.value", key: "dynamic-config.rs/agent-run-as-same-user",
		message: `dynamic-config.rs/agent-run-as-same-user is "1": "true" or "false"`},
	{name: "same-user with an annotated UID is refused", pod: consulPod("agent-run-as-same-user", "true", "agent-run-as-user", "1000"), check: "same-user.both", key: "dynamic-config.rs/agent-run-as-same-user",
		message: `dynamic-config.rs/agent-run-as-same-user and dynamic-config.rs/agent-run-as-user are both set: one identity, one place — keep one`},
	{name: "same-user without a runAsUser is refused", pod: consulPod("agent-run-as-same-user", "true"), check: "same-user.no-uid", key: "dynamic-config.rs/agent-run-as-same-user",
		message: `dynamic-config.rs/agent-run-as-same-user is "true", but the pod has no runAsUser to inherit (neither spec.containers[0].securityContext.runAsUser nor spec.securityContext.runAsUser)`},
	{name: "same-user with a negative container UID is refused", pod: with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) { f.Containers[0].RunAsUser = i64(-5); f.RunAsUser = i64(1000) }),
		check: "same-user.range", key: "dynamic-config.rs/agent-run-as-same-user",
		message: `dynamic-config.rs/agent-run-as-same-user inherits runAsUser -5 from spec.containers[0].securityContext.runAsUser, which is not a UID the agent can take (1 to 2147483647)`},
	{name: "same-user with a root pod UID is refused", pod: with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) { f.RunAsUser = i64(0) }),
		check: "same-user.root", key: "dynamic-config.rs/agent-run-as-same-user",
		message: `dynamic-config.rs/agent-run-as-same-user inherits runAsUser 0 from spec.securityContext.runAsUser: the agent stays nonroot in every configuration`},
	{name: "same-user cannot bypass a pinned UID", doc: `runAsUser: "1000!"`, pod: with(consulPod("agent-run-as-same-user", "true"), func(f *decision.Facts) { f.RunAsUser = i64(2000) }),
		check: "pin.agent-run-as-same-user", key: "dynamic-config.rs/agent-run-as-same-user",
		message: `dynamic-config.rs/agent-run-as-same-user gives the agent UID 2000 from spec.securityContext.runAsUser, but the installation pins agent-run-as-user to "1000" — match it or drop the annotation`},

	// B27–B30
	{name: "env-inject in sidecar mode is refused", pod: consulPod("env-inject", "app"), check: "env-inject.mode", key: "dynamic-config.rs/env-inject",
		message: `dynamic-config.rs/env-inject needs dynamic-config.rs/mode "init" or "both" — the file must exist before the container starts; the mode here is "sidecar"`},
	{name: "env-restart yes is refused", pod: consulPod("env-restart", "yes"), check: "bool.value", key: "dynamic-config.rs/env-restart",
		message: `dynamic-config.rs/env-restart is "yes": "true" or "false"`},
	{name: "env-restart without env-inject is refused", pod: consulPod("env-restart", "true", "mode", "both"), check: "env-restart.needs-env-inject", key: "dynamic-config.rs/env-restart",
		message: `dynamic-config.rs/env-restart is "true" without dynamic-config.rs/env-inject: there is no injected environment to restart for`},
	{name: "env-restart outside mode both is refused", pod: consulPod("env-restart", "true", "mode", "init", "env-inject", "app"), check: "env-restart.needs-both", key: "dynamic-config.rs/env-restart",
		message: `dynamic-config.rs/env-restart needs dynamic-config.rs/mode "both" — an init agent writes the first file, a watching agent notices changes; the mode here is "init"`},
	{name: "aws-secret outside s3 is refused", pod: consulPod("aws-secret", "aws"), check: "aws-secret.source", key: "dynamic-config.rs/aws-secret",
		message: `dynamic-config.rs/aws-secret is the s3 source's flag; the source here is "consul"`},
	{name: "aws-secret without a source says unset", pod: facts("inject", "true", "endpoint", "e://x", "aws-secret", "aws"), check: "aws-secret.source", key: "dynamic-config.rs/aws-secret",
		message: `dynamic-config.rs/aws-secret is the s3 source's flag; the source here is "unset"`},
	{name: "a metrics port that is no number is refused", pod: consulPod("metrics-port", "http"), check: "metrics-port.value", key: "dynamic-config.rs/metrics-port",
		message: `dynamic-config.rs/metrics-port is "http": a port number`},
	{name: "a pinned metrics port refuses opting out", doc: `metricsPort: "9110!"`, pod: consulPod("metrics-port", "0"), check: "pin.metrics-port", key: "dynamic-config.rs/metrics-port",
		message: `dynamic-config.rs/metrics-port is "0", but the installation pins it to "9110" — match it or drop the annotation` + advice},

	// B31–B48
	{name: "meta on is refused", pod: consulPod("meta", "on"), check: "bool.value", key: "dynamic-config.rs/meta", message: `dynamic-config.rs/meta is "on": "true" or "false"`},
	{name: "dynamic TRUE is refused", pod: consulPod("dynamic", "TRUE"), check: "bool.value", key: "dynamic-config.rs/dynamic", message: `dynamic-config.rs/dynamic is "TRUE": "true" or "false"`},
	{name: "revoke-on-shutdown no is refused", pod: consulPod("revoke-on-shutdown", "no"), check: "bool.value", key: "dynamic-config.rs/revoke-on-shutdown", message: `dynamic-config.rs/revoke-on-shutdown is "no": "true" or "false"`},
	{name: "revoke-grace in minutes is refused", pod: consulPod("revoke-grace", "1m"), check: "revoke-grace.value", key: "dynamic-config.rs/revoke-grace",
		message: `dynamic-config.rs/revoke-grace is "1m": whole seconds, like "10s"`},
	{name: "a zero revoke-grace is refused", pod: consulPod("revoke-grace", "0s"), check: "revoke-grace.zero", key: "dynamic-config.rs/revoke-grace",
		message: `dynamic-config.rs/revoke-grace is "0s": zero leaves no time to revoke anything; give whole seconds above 0, like "10s"`},
	{name: "a revoke-grace above the default grace period is refused", pod: consulPod("revoke-grace", "060s", "dynamic", "true"), check: "revoke-grace.above-grace", key: "dynamic-config.rs/revoke-grace",
		message: `dynamic-config.rs/revoke-grace is 60s, longer than the pod's terminationGracePeriodSeconds (30): the kubelet would SIGKILL the agent before it finished revoking`},
	{name: "a revoke-grace above the pod's grace period is refused", pod: with(consulPod("revoke-grace", "20", "dynamic", "true"), func(f *decision.Facts) { f.TerminationGracePeriodSeconds = i64(10) }),
		check: "revoke-grace.above-grace", key: "dynamic-config.rs/revoke-grace",
		message: `dynamic-config.rs/revoke-grace is 20s, longer than the pod's terminationGracePeriodSeconds (10): the kubelet would SIGKILL the agent before it finished revoking`},
	{name: "revoke-grace without dynamic is refused", pod: consulPod("revoke-grace", "10s"), check: "revoke-grace.needs-dynamic", key: "dynamic-config.rs/revoke-grace",
		message: `dynamic-config.rs/revoke-grace is set, but dynamic-config.rs/dynamic is not "true": only dynamic credentials are revoked on shutdown`},
	{name: "init-first 1 is refused", pod: consulPod("init-first", "1"), check: "bool.value", key: "dynamic-config.rs/init-first", message: `dynamic-config.rs/init-first is "1": "true" or "false"`},
	{name: "init-first in sidecar mode is refused", pod: consulPod("init-first", "true"), check: "init-first.sidecar", key: "dynamic-config.rs/init-first",
		message: `dynamic-config.rs/init-first is "true" with mode "sidecar": there is no init container to put first`},
	{name: "notify-http in init mode is refused", pod: consulPod("notify-http", "http://localhost:8080/", "mode", "init"), check: "notify-http.init", key: "dynamic-config.rs/notify-http",
		message: `dynamic-config.rs/notify-http needs a watching agent, and mode "init" has none`},
	{name: "notify-http to another host is refused", pod: consulPod("notify-http", "http://app.default.svc:8080/reload"), check: "notify-http.url", key: "dynamic-config.rs/notify-http",
		message: `dynamic-config.rs/notify-http is "http://app.default.svc:8080/reload": an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`},
	{name: "tls-reload no is refused", pod: consulPod("tls-reload", "no"), check: "bool.value", key: "dynamic-config.rs/tls-reload", message: `dynamic-config.rs/tls-reload is "no": "true" or "false"`},
	{name: "history in words is refused", pod: consulPod("history", "three"), check: "history.value", key: "dynamic-config.rs/history", message: `dynamic-config.rs/history is "three": a count, like "3"`},
	{name: "history zero is refused", pod: consulPod("history", "0"), check: "history.zero", key: "dynamic-config.rs/history",
		message: `dynamic-config.rs/history is "0": a count of at least 1 — drop the annotation to keep no history`},
	{name: "history eleven is refused", pod: consulPod("history", "11"), check: "history.max", key: "dynamic-config.rs/history", message: `dynamic-config.rs/history is "11": at most 10`},
	{name: "history on disk is refused", pod: consulPod("history", "3", "volume-medium", "disk"), check: "history.disk", key: "dynamic-config.rs/history",
		message: `dynamic-config.rs/history keeps earlier documents beside the rendered one, and volume-medium disk would leave them on node storage that outlives the pod: use memory`},
	{name: "a canary in init mode is refused", pod: consulPod("canary-configmap", "canary", "mode", "init"), check: "canary-configmap.init", key: "dynamic-config.rs/canary-configmap",
		message: `dynamic-config.rs/canary-configmap needs a watching agent, and mode "init" has none`},
	{name: "a timeout with a unit is refused", pod: consulPod("timeout", "30s"), check: "timeout.value", key: "dynamic-config.rs/timeout", message: `dynamic-config.rs/timeout is "30s": whole seconds, like "30"`},
	{name: "a zero timeout is refused", pod: consulPod("timeout", "0"), check: "timeout.zero", key: "dynamic-config.rs/timeout",
		message: `dynamic-config.rs/timeout is "0": a zero timeout is no deadline at all; give whole seconds above 0, like "30"`},
	{name: "an agent image is refused when the installation allows none", pod: consulPod("agent-image", "evil.example/agent:1"), check: "agent-image.not-allowed", key: "dynamic-config.rs/agent-image",
		message: `dynamic-config.rs/agent-image is "evil.example/agent:1", which this installation does not allow: images must start with a prefix listed in webhook.agentImageAllow (DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW)`},
	{name: "an agent image outside the allowed prefixes is refused", env: []string{"DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/"}, pod: consulPod("agent-image", "ghcr.io/evil/agent:1"), check: "agent-image.not-allowed", key: "dynamic-config.rs/agent-image",
		message: `dynamic-config.rs/agent-image is "ghcr.io/evil/agent:1", which this installation does not allow: images must start with a prefix listed in webhook.agentImageAllow (DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW)`},
	{name: "events yes is refused", pod: consulPod("events", "yes"), check: "bool.value", key: "dynamic-config.rs/events", message: `dynamic-config.rs/events is "yes": "true" or "false"`},
	{name: "events are refused when the installation does not offer them", pod: consulPod("events", "true"), check: "events.not-offered", key: "dynamic-config.rs/events",
		message: `dynamic-config.rs/events is "true", which is not available in this installation: the installer opens it with agent.events.enabled: true (webhook.allowEvents)`},
	{name: "on-drift ignore is refused", pod: consulPod("on-drift", "ignore"), check: "on-drift.value", key: "dynamic-config.rs/on-drift", message: `dynamic-config.rs/on-drift is "ignore": "warn", "repair" or "fail"`},
	{name: "startup-policy fresh is refused", pod: consulPod("startup-policy", "fresh"), check: "startup-policy.value", key: "dynamic-config.rs/startup-policy",
		message: `dynamic-config.rs/startup-policy is "fresh": "allow-cached", "require-fresh" or "best-effort"`},
	{name: "on-delete keep is refused", pod: consulPod("on-delete", "keep"), check: "on-delete.value", key: "dynamic-config.rs/on-delete", message: `dynamic-config.rs/on-delete is "keep": "retain", "remove" or "fail"`},
	{name: "max-document-bytes zero is refused", pod: consulPod("max-document-bytes", "0"), check: "max-document-bytes.value", key: "dynamic-config.rs/max-document-bytes",
		message: `dynamic-config.rs/max-document-bytes is "0": a byte count above 0, like "8388608"`},
	{name: "revoke-on-shutdown false without dynamic is refused", pod: consulPod("revoke-on-shutdown", "false"), check: "revoke-on-shutdown.needs-dynamic", key: "dynamic-config.rs/revoke-on-shutdown",
		message: `dynamic-config.rs/revoke-on-shutdown is "false", but dynamic-config.rs/dynamic is not "true": only dynamic credentials have a lease to revoke`},
	{name: "readiness off is refused", pod: consulPod("readiness", "off"), check: "bool.value", key: "dynamic-config.rs/readiness", message: `dynamic-config.rs/readiness is "off": "true" or "false"`},
	{name: "require-ack yes is refused", pod: consulPod("require-ack", "yes"), check: "bool.value", key: "dynamic-config.rs/require-ack", message: `dynamic-config.rs/require-ack is "yes": "true" or "false"`},
	{name: "require-ack without readiness is refused", pod: consulPod("require-ack", "true", "readiness", "false"), check: "require-ack.readiness-off", key: "dynamic-config.rs/require-ack",
		message: `dynamic-config.rs/require-ack is "true" with dynamic-config.rs/readiness "false": the acknowledgement is reported through the readiness probe`},
	{name: "require-ack in init mode is refused", pod: consulPod("require-ack", "true", "mode", "init"), check: "require-ack.init", key: "dynamic-config.rs/require-ack",
		message: `dynamic-config.rs/require-ack needs a watching agent, and mode "init" has none`},

	// B49–B52
	{name: "an agent-env entry without = is refused", pod: consulPod("agent-env", "RUST_LOG=info,  DEBUG "), check: "agent-env.entry", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env holds "DEBUG": comma-separated NAME=value pairs (a value itself cannot contain a comma)`},
	{name: "a lower-case agent-env name is refused", pod: consulPod("agent-env", " rust_log =info"), check: "agent-env.name", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env names "rust_log": variable names are UPPER_SNAKE, like "RUST_LOG"`},
	{name: "an agent-env name set twice is refused", pod: consulPod("agent-env", "A=1, A=2"), check: "agent-env.twice", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env sets A twice`},
	{name: "an agent-env naming nothing is refused", pod: consulPod("agent-env", " , ,"), check: "agent-env.nothing", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env is present and names nothing: drop it or fill it`},
	{name: "an empty agent-env names nothing", pod: consulPod("agent-env", ""), check: "agent-env.nothing", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env is present and names nothing: drop it or fill it`},
	{name: "agent-env cannot set what aws-secret supplies", pod: storePod("s3", "aws-secret", "aws", "agent-env", "AWS_SECRET_ACCESS_KEY=x"), check: "agent-env.aws", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env sets AWS_SECRET_ACCESS_KEY, and dynamic-config.rs/aws-secret already supplies it: one credential, one place`},
	{name: "agent-env cannot set what the injection sets", pod: consulPod("agent-env", "DYNAMIC_CONFIG_POD_NAME=x"), check: "agent-env.reserved", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env sets DYNAMIC_CONFIG_POD_NAME, which the injection sets itself: drop it`},
	{name: "inject-containers naming nothing is refused", pod: consulPod("inject-containers", " , "), check: "inject-containers.empty", key: "dynamic-config.rs/inject-containers",
		message: `dynamic-config.rs/inject-containers is empty: name one or more of the pod's containers, comma-separated, or drop it to mount into every container`},
	{name: "inject-containers naming a missing container is refused", pod: consulPod("inject-containers", "app, db"), check: "inject-containers.missing", key: "dynamic-config.rs/inject-containers",
		message: `dynamic-config.rs/inject-containers names container "db", and the pod has no such container`},
	{name: "env-inject into a container left out of the mount is refused", pod: with(consulPod("mode", "init", "env-inject", "side", "inject-containers", "app", "path", "/config/app.env"),
		func(f *decision.Facts) {
			f.Containers = append(f.Containers, decision.Container{Name: "side", HasCommand: true, Command: []string{"x"}})
		}),
		check: "env-inject.excluded", key: "dynamic-config.rs/env-inject",
		message: `dynamic-config.rs/env-inject names container "side", which dynamic-config.rs/inject-containers leaves out: the file would not be mounted there`},
	{name: "env-inject into a missing container is refused", pod: consulPod("mode", "init", "env-inject", "web", "path", "/config/app.env"), check: "env-inject.missing", key: "dynamic-config.rs/env-inject",
		message: `dynamic-config.rs/env-inject names container "web", and the pod has no such container`},
	{name: "env-inject into a container without a command is refused", pod: with(consulPod("mode", "init", "env-inject", "app", "path", "/config/app.env"), func(f *decision.Facts) { f.Containers[0].HasCommand, f.Containers[0].Command = true, nil }),
		check: "env-inject.no-command", key: "dynamic-config.rs/env-inject",
		message: `dynamic-config.rs/env-inject names container "app", which has no command: the wrapper must know what to exec, and the image's ENTRYPOINT cannot be read at admission — spell the command out in the pod`},
	{name: "env-inject of a path the wrapper cannot quote is refused", pod: consulPod("mode", "init", "env-inject", "app", "path", "/config/my app.env"), check: "env-inject.path", key: "dynamic-config.rs/env-inject",
		message: `dynamic-config.rs/env-inject sources "/config/my app.env" in a shell, and that path holds characters the wrapper does not quote: use letters, digits, ".", "_", "-" and "/"`},
	{name: "env-restart over an existing liveness probe is refused", pod: with(consulPod("mode", "both", "env-inject", "app", "env-restart", "true", "path", "/config/app.env"), func(f *decision.Facts) { f.Containers[0].HasLivenessProbe = true }),
		check: "env-restart.liveness", key: "dynamic-config.rs/env-restart",
		message: `dynamic-config.rs/env-restart needs the livenessProbe of container "app", and it already has one: the restart check would replace it`},
	{name: "env-inject of a non-.env file is refused", pod: consulPod("mode", "init", "env-inject", "app"), check: "env-inject.format", key: "dynamic-config.rs/env-inject",
		message: `dynamic-config.rs/env-inject sources "/config/rendered.toml" in a shell, and only a .env file is shell syntax: end dynamic-config.rs/path with .env`},
	{name: "both template keys on the default render are refused", pod: consulPod("template", "{{ . }}", "template-configmap", "tpl"), check: "template.both", key: "dynamic-config.rs/template",
		message: `dynamic-config.rs/template and dynamic-config.rs/template-configmap are both set: one template, one place`},

	// B53: named renders
	{name: "a render name starting with a hyphen is refused, naming the first key", pod: consulPod("path.-x", "/config/x.json", "key.-x", "k"), check: "render.name", key: "dynamic-config.rs/key.-x", render: "-x",
		message: `render name "-x" (from dynamic-config.rs/key.-x) must start and end with a letter or digit: it becomes part of container and volume names`},
	{name: "a named render needs its own source", pod: consulPod("key.cache", "k"), check: "render.source-required", key: "dynamic-config.rs/source.cache", render: "cache",
		message: `render "cache" exists, so dynamic-config.rs/source.cache is required`},
	{name: "a named render's source must be a store", pod: consulPod("source.cache", "memcached"), check: "source.value", key: "dynamic-config.rs/source.cache", render: "cache",
		message: `dynamic-config.rs/source.cache is "memcached": one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3`},
	{name: "a named render's pin omits the advice", doc: "storeDefaults:\n  redis: \"key=shared/cache.json!\"", pod: cachePod(), check: "pin.key", key: "dynamic-config.rs/key.cache", render: "cache",
		message: `dynamic-config.rs/key.cache is "myapp/cache.json", but the installation pins it to "shared/cache.json" — match it or drop the annotation`},
	{name: "a named render's pair follows the pin", doc: "storeDefaults:\n  redis: \"endpoint=redis://r:6379!\"", pod: consulPod("source.cache", "redis", "endpoint-secret.cache", "r/url"), check: "pair-pin.endpoint", key: "dynamic-config.rs/endpoint-secret.cache", render: "cache",
		message: `dynamic-config.rs/endpoint-secret.cache is set, but the installation pins dynamic-config.rs/endpoint.cache to "redis://r:6379" — the pair answers as one: drop dynamic-config.rs/endpoint-secret.cache`},
	{name: "a named render's watch-seconds is checked", pod: cachePod("watch-seconds.cache", "-1"), check: "watch-seconds.value", key: "dynamic-config.rs/watch-seconds.cache", render: "cache",
		message: `dynamic-config.rs/watch-seconds.cache is "-1": whole seconds`},
	{name: "a named render's token-secret form is checked", pod: cachePod("token-secret.cache", "t"), check: "secret-ref.form", key: "dynamic-config.rs/token-secret.cache", render: "cache",
		message: `dynamic-config.rs/token-secret.cache is "t": the form is <secret-name>/<key>`},
	{name: "a named render needs an endpoint", pod: consulPod("source.cache", "redis"), check: "render.endpoint-required", key: "dynamic-config.rs/endpoint.cache", render: "cache",
		message: `render "cache" exists, so dynamic-config.rs/endpoint.cache is required (or dynamic-config.rs/endpoint-secret.cache, or a per-store default endpoint for its store)`},
	{name: "a named render with both endpoint halves is refused", pod: cachePod("endpoint-secret.cache", "r/url"), check: "endpoint.both", key: "dynamic-config.rs/endpoint.cache", render: "cache",
		message: `dynamic-config.rs/endpoint.cache and dynamic-config.rs/endpoint-secret.cache are both set: one address, one place — keep one`},
	{name: "a named render's ssh key with another auth is refused", pod: cachePod("ssh-secret.cache", "k", "auth.cache", "token"), check: "ssh-secret.auth", key: "dynamic-config.rs/ssh-secret.cache", render: "cache",
		message: `dynamic-config.rs/ssh-secret.cache (k) with auth "token": an ssh key is auth "ssh-key"`},
	{name: "a named render's tls-skip-verify is not offered", pod: cachePod("tls-skip-verify.cache", "true"), check: "tls-skip-verify.not-offered", key: "dynamic-config.rs/tls-skip-verify.cache", render: "cache",
		message: `dynamic-config.rs/tls-skip-verify.cache is "true", which is not available in this installation: the installer opens it with webhook.allowTlsSkipVerify: true`},
	{name: "a named render's file mode is checked", pod: cachePod("file-mode.cache", "0200"), check: "file-mode.owner-read", key: "dynamic-config.rs/file-mode.cache", render: "cache",
		message: `dynamic-config.rs/file-mode.cache is "0200": the owner must at least read it (0400 set)`},
	{name: "a named render's pinned fleet file mode is refused", doc: `fileMode: "0640!"`, pod: cachePod("file-mode.cache", "0600"), check: "pin.file-mode", key: "dynamic-config.rs/file-mode.cache", render: "cache",
		message: `dynamic-config.rs/file-mode.cache is "0600", but the installation pins it to "0640" — match it or drop the annotation`},
	{name: "a named render's metrics port is checked", pod: cachePod("metrics-port.cache", "65536"), check: "metrics-port.value", key: "dynamic-config.rs/metrics-port.cache", render: "cache",
		message: `dynamic-config.rs/metrics-port.cache is "65536": a port number`},
	{name: "a named render cannot take the default render's metrics port", doc: `metricsPort: "9110"`, pod: cachePod("metrics-port.cache", "09110"), check: "render.metrics-port-taken", key: "dynamic-config.rs/metrics-port.cache", render: "cache",
		message: `dynamic-config.rs/metrics-port.cache is "09110", a port another agent of this pod already uses: each agent needs its own port`},
	{name: "a named render's timeout is checked", pod: cachePod("timeout.cache", "0"), check: "timeout.zero", key: "dynamic-config.rs/timeout.cache", render: "cache",
		message: `dynamic-config.rs/timeout.cache is "0": a zero timeout is no deadline at all; give whole seconds above 0, like "30"`},
	{name: "a named render's tls-reload is checked", pod: cachePod("tls-reload.cache", "False"), check: "bool.value", key: "dynamic-config.rs/tls-reload.cache", render: "cache",
		message: `dynamic-config.rs/tls-reload.cache is "False": "true" or "false"`},
	{name: "a named render with both templates is refused", pod: cachePod("template.cache", "x", "template-configmap.cache", "t"), check: "template.both", key: "dynamic-config.rs/template.cache", render: "cache",
		message: `dynamic-config.rs/template.cache and dynamic-config.rs/template-configmap.cache are both set: one template, one place`},
	{name: "a named render needs a key", pod: consulPod("source.cache", "redis", "endpoint.cache", "redis://r"), check: "render.key-required", key: "dynamic-config.rs/key.cache", render: "cache",
		message: `render "cache" exists, so dynamic-config.rs/key.cache is required (or a per-store default key for its store)`},
	{name: "a named render needs a path", pod: consulPod("source.cache", "redis", "endpoint.cache", "redis://r", "key.cache", "k"), check: "render.path-required", key: "dynamic-config.rs/path.cache", render: "cache",
		message: `render "cache" exists, so dynamic-config.rs/path.cache is required`},
	{name: "a named render's path must have a directory of its own", pod: cachePod("path.cache", "/cache.json"), check: "path.shape", key: "dynamic-config.rs/path.cache", render: "cache",
		message: `dynamic-config.rs/path.cache is "/cache.json": an absolute file path in a directory of its own, like "/config/app.toml"`},
	{name: "a named render's path cannot be in the agent's tree", pod: cachePod("path.cache", "/etc/dynamic-config/ca/x.json"), check: "path.reserved", key: "dynamic-config.rs/path.cache", render: "cache",
		message: `dynamic-config.rs/path.cache is "/etc/dynamic-config/ca/x.json": /etc/dynamic-config and everything under it is where the agent mounts its own files — choose another directory`},
	{name: "a named render's path must share the default directory", pod: cachePod("path.cache", "/cache/cache.json"), check: "render.path-directory", key: "dynamic-config.rs/path.cache", render: "cache",
		message: `dynamic-config.rs/path.cache is "/cache/cache.json", outside the default path's directory "/config": every render shares ONE volume, mounted at the default path's directory`},

	// B54–B58
	{name: "a relative also path is refused", pod: consulPod("also.extra", "extra.json"), check: "also.path", key: "dynamic-config.rs/also.extra",
		message: `dynamic-config.rs/also.extra is "extra.json": an absolute file path, like "/config/extra.json"`},
	{name: "an also path in the agent's tree is refused", pod: consulPod("also.extra", "/etc/dynamic-config/x.json"), check: "path.reserved", key: "dynamic-config.rs/also.extra",
		message: `dynamic-config.rs/also.extra is "/etc/dynamic-config/x.json": /etc/dynamic-config and everything under it is where the agent mounts its own files — choose another directory`},
	{name: "an also path in another directory is refused", pod: consulPod("also.extra", "/other/x.json"), check: "also.directory", key: "dynamic-config.rs/also.extra",
		message: `dynamic-config.rs/also.extra is "/other/x.json": it must sit in the same directory as dynamic-config.rs/path ("/config"), the one volume the agent writes to`},
	{name: "an also-section without its also is refused", pod: consulPod("also-section.b", "db", "also-section.a", "x", "also.a", "/config/a.json"), check: "also-section.orphan", key: "dynamic-config.rs/also-section.b",
		message: `dynamic-config.rs/also-section.b is set, but dynamic-config.rs/also.b is not: a section needs a rendering to go to`},
	{name: "a pod naming no store is told to name one for the path", pod: facts("inject", "true", "endpoint", "e://x"), check: "path.required", key: "dynamic-config.rs/path",
		message: `dynamic-config.rs/path is required: set it on the pod, or give the fleet a default path (agent.defaults.path) — and name the store with dynamic-config.rs/source, since no per-store default can answer without one`},
	{name: "a pod naming a store is told about default paths", pod: facts("inject", "true", "source", "consul", "endpoint", "e://x"), check: "path.required", key: "dynamic-config.rs/path",
		message: `dynamic-config.rs/path is required: set it on the pod, or give the fleet or the store a default path (agent.defaults.path, agent.defaults.perStore)`},
	{name: "a path in the root directory is refused", pod: consulPod("path", "/app.toml"), check: "path.shape", key: "dynamic-config.rs/path",
		message: `dynamic-config.rs/path is "/app.toml": an absolute file path in a directory of its own, like "/config/app.toml"`},
	{name: "a path in the agent's tree is refused", pod: consulPod("path", "/etc/dynamic-config/app.toml"), check: "path.reserved", key: "dynamic-config.rs/path",
		message: `dynamic-config.rs/path is "/etc/dynamic-config/app.toml": /etc/dynamic-config and everything under it is where the agent mounts its own files — choose another directory`},
	{name: "an also rendering onto the default file is refused", pod: consulPod("also.extra", "/config/rendered.toml"), check: "output.duplicate", key: "dynamic-config.rs/also.extra",
		message: `dynamic-config.rs/also.extra is "/config/rendered.toml", the same file as dynamic-config.rs/path: every rendering needs its own file`},
	{name: "two named renders writing one file are refused", pod: cachePod("source.db", "redis", "endpoint.db", "r://x", "key.db", "k", "path.db", "/config/cache.json"), check: "output.duplicate", key: "dynamic-config.rs/path.db", render: "db",
		message: `dynamic-config.rs/path.db is "/config/cache.json", the same file as dynamic-config.rs/path.cache: every rendering needs its own file`},
	{name: "a pod without any source is refused for it", pod: facts("inject", "true", "endpoint", "e://x", "path", "/config/a.json"), check: "source.required", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is required: set it on the pod, or give the fleet a default with agent.defaults.source (DYNAMIC_CONFIG_AGENT_SOURCE)`},
	{name: "a pod without any key is refused for it", pod: facts("inject", "true", "source", "consul", "endpoint", "e://x", "path", "/config/a.json"), check: "key.required", key: "dynamic-config.rs/key",
		message: `dynamic-config.rs/key is required: set it on the pod, or give the store a per-store default key (agent.defaults.perStore)`},

	// B59–B60: gates
	{name: "a denied store is turned off in its namespace", doc: gateDoc, pod: in("sandbox", storePod("git")), check: "gate.source-deny", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is "git", and source "git" is turned off in namespace "sandbox" (webhook.sourceDeny, DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY)`},
	{name: "a store off the allowlist lists what is allowed in the namespace", doc: gateDoc, pod: in("payments", storePod("git")), check: "gate.source-allow", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is "git", which is not on the source allowlist for namespace "payments"; allowed here: vault, s3, consul (webhook.sourceAllow, DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW)`},
	{name: "another namespace sees only the every-namespace entries", doc: gateDoc, pod: in("team-a", storePod("redis")), check: "gate.source-allow", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is "redis", which is not on the source allowlist for namespace "team-a"; allowed here: consul (webhook.sourceAllow, DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW)`},
	{name: "an allowlist with nothing for the namespace says so", doc: `sourceAllow: "payments: vault"`, pod: in("team-a", consulPod()), check: "gate.source-allow", key: "dynamic-config.rs/source",
		message: `dynamic-config.rs/source is "consul", which is not on the source allowlist for namespace "team-a"; no source is currently allowed here (webhook.sourceAllow, DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW)`},
	{name: "a fleet default source is judged as the fleet's", doc: "source: git\nsourceDeny: \"git\"", pod: facts("inject", "true", "endpoint", "e://x", "key", "k", "path", "/config/a.json"), check: "gate.source-deny",
		message: `the fleet default source "git", and source "git" is turned off in namespace "default" (webhook.sourceDeny, DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY)`},
	{name: "a named render's store is judged too", doc: gateDoc, pod: cachePod(), check: "gate.source-allow", key: "dynamic-config.rs/source.cache", render: "cache",
		message: `dynamic-config.rs/source.cache is "redis", which is not on the source allowlist for namespace "default"; allowed here: consul (webhook.sourceAllow, DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW)`},
	{name: "an agent-env name outside the namespace's allowlist is refused", doc: gateDoc, pod: consulPod("agent-env", "HTTPS_PROXY=http://mine:3128"), check: "gate.agent-env", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env sets HTTPS_PROXY, which is not allowed in namespace "default"; allowed here: RUST_LOG (webhook.agentEnvAllow, DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW)`},
	{name: "agent-env is closed until the installer opens it", pod: consulPod("agent-env", "RUST_LOG=debug"), check: "gate.agent-env", key: "dynamic-config.rs/agent-env",
		message: `dynamic-config.rs/agent-env sets RUST_LOG, which is not allowed in namespace "default"; nothing is currently allowed here (webhook.agentEnvAllow, DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW)`},

	// B61: conflicts
	{name: "a pod already holding the agent's container name is refused", pod: with(consulPod("source.cache", "redis", "endpoint.cache", "r://x", "key.cache", "k", "path.cache", "/config/c.json"),
		func(f *decision.Facts) {
			f.InitContainers = []decision.Container{{Name: "dynamic-config-agent-cache"}}
		}), check: "conflict.container", render: "cache",
		message: `the pod already has a container named "dynamic-config-agent-cache", and the injection needs that name for its agent: rename that container, or set dynamic-config.rs/inject to "false"`},
	{name: "an ephemeral container name conflicts too", pod: with(consulPod(), func(f *decision.Facts) { f.EphemeralContainers = []decision.Container{{Name: "dynamic-config-agent"}} }), check: "conflict.container",
		message: `the pod already has a container named "dynamic-config-agent", and the injection needs that name for its agent: rename that container, or set dynamic-config.rs/inject to "false"`},
	{name: "a pod already holding the shared volume's name is refused", pod: with(consulPod(), func(f *decision.Facts) { f.VolumeNames = []string{"data", "dynamic-config"} }), check: "conflict.volume",
		message: `the pod already has a volume named "dynamic-config", and the injection needs that name: rename that volume, or set dynamic-config.rs/inject to "false"`},
	{name: "an app container already mounting the directory is refused", pod: with(consulPod(), func(f *decision.Facts) { f.Containers[0].VolumeMountPaths = []string{"/data", "/config/"} }), check: "conflict.mount-path", key: "dynamic-config.rs/path",
		message: `container "app" already mounts something at "/config", where the injection mounts the rendered document: move that mount, choose another directory for dynamic-config.rs/path, or leave the container out with dynamic-config.rs/inject-containers`},
}

func TestEveryCheckRefusesWithItsSlugCodeCheckAndMessage(t *testing.T) {
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(load(t, tt.doc, tt.env...), nil, tt.pod)
			r := mustRefuse(t, d)
			reason, slug, code := wantSlug(tt.check)
			if r.Check != tt.check || r.Message != tt.message {
				t.Fatalf("refusal\n got %s: %s\nwant %s: %s", r.Check, r.Message, tt.check, tt.message)
			}
			if r.Reason != reason || r.Slug != slug || r.HTTPCode != code {
				t.Errorf("reason %v %s %d, want %v %s %d", r.Reason, r.Slug, r.HTTPCode, reason, slug, code)
			}
			if r.Key != tt.key || r.Render != tt.render {
				t.Errorf("key %q render %q, want %q %q", r.Key, r.Render, tt.key, tt.render)
			}
			if d.Plan != nil || len(d.Warnings) != 0 {
				t.Errorf("a refusal carries a plan or warnings")
			}
			if d.AuditAnnotations["revision"] == "" || d.InstallationRevision == "" {
				t.Errorf("revision missing")
			}
			for _, rd := range d.Renders {
				if rd.Validated {
					t.Errorf("render %q validated on a refusal", rd.Name)
				}
			}
		})
	}
}

// allChecks are the check ids of spec 01 §8 (the pin.<knob> family counted once per knob tested).
var allChecks = strings.Fields(`class.disabled status.no-agent status.value inject.value key.unknown value.empty
source.value pin.source pin.endpoint pair-pin.endpoint pair-pin.template mode.value pin.mode
watch-seconds.value pin.watch-seconds secret-ref.form object-ref.form secret-name.form endpoint.required
endpoint.both ssh-secret.auth bool.value tls-skip-verify.not-offered tls-skip-verify.with-ca
volume-medium.value pin.volume-medium pin.native-sidecar pin.agent-cpu-request pin.agent-memory-request
pin.agent-cpu-limit pin.agent-memory-limit quantity.value agent-ephemeral.request-above-limit
agent-cpu.request-above-limit agent-memory.request-above-limit file-mode.value file-mode.range
file-mode.owner-read pin.file-mode run-as.value run-as.root pin.agent-run-as-user pin.agent-run-as-group
same-user.both same-user.no-uid same-user.range same-user.root pin.agent-run-as-same-user env-inject.mode
env-restart.needs-env-inject env-restart.needs-both aws-secret.source metrics-port.value pin.metrics-port
revoke-grace.value revoke-grace.zero revoke-grace.above-grace revoke-grace.needs-dynamic init-first.sidecar
notify-http.init notify-http.url history.value history.zero history.max history.disk canary-configmap.init
timeout.value timeout.zero agent-image.not-allowed events.not-offered on-drift.value startup-policy.value
on-delete.value max-document-bytes.value revoke-on-shutdown.needs-dynamic require-ack.readiness-off
require-ack.init agent-env.entry agent-env.name agent-env.twice agent-env.nothing agent-env.aws
agent-env.reserved inject-containers.empty inject-containers.missing env-inject.excluded env-inject.missing
env-inject.no-command env-inject.path env-restart.liveness env-inject.format template.both render.name
render.source-required pin.key render.endpoint-required render.metrics-port-taken render.key-required
render.path-required path.shape path.reserved render.path-directory also.path also.directory
also-section.orphan path.required output.duplicate source.required key.required gate.source-deny
gate.source-allow gate.agent-env conflict.container conflict.volume conflict.mount-path pin.path`)

func TestEveryCheckIDHasACase(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range checkCases {
		seen[c.check] = true
	}
	for _, id := range allChecks {
		if !seen[id] {
			t.Errorf("check %s has no case", id)
		}
	}
}
