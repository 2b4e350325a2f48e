//go:generate go run ../../../cmd/knobgen -out ids.go

package registry

import "github.com/dynamic-config-admission/dynamic-config/decider/core/knob"

// Ladders (data): the installation rungs a knob walks after the annotation.
var (
	store     = []Tier{TierStore}
	fleetOnly = []Tier{TierFleet}
	storeFlt  = []Tier{TierStore, TierFleet}
)

// perStoreString builds a store-shaped per-render row (tier S for every render).
func perStoreString(name string, grammar knob.Grammar, builtInDoc, grammarText, doc string, checks ...string) Row {
	return Row{Name: name, PerRender: true, Tiers: store, NamedTiers: store, BuiltInDoc: builtInDoc,
		Scope: ScopeEach, StoreShaped: true, Grammar: grammar, Checks: checks, GrammarText: grammarText, Doc: doc}
}

// flag builds a pod-only boolean row.
func flag(name, builtIn string, scope Scope, doc string, checks ...string) Row {
	return Row{Name: name, BuiltIn: builtIn, BuiltInDoc: builtIn, Scope: scope, Grammar: knob.Bool,
		Checks: append([]string{"bool.value"}, checks...), GrammarText: `"true" or "false"`, Doc: doc}
}

// arg is the agent side of a row: its argument's row in spec 03 §3.2, the
// agent flag, the agents that receive it and how the value becomes it.
func arg(at int, flag string, kinds AgentKinds, format Format) *Agent {
	return &Agent{At: at, Flag: flag, Kinds: kinds, Format: format}
}

// at places a helper-built row's own checks on a named render.
func (r Row) at(named Step) Row { r.Named = named; return r }

// with gives a helper-built row its agent side.
func (r Row) with(a *Agent) Row { r.Agent = a; return r }

// fleet is the installation setting of a knob's fleet default (spec 02 §2.1
// row, document key, variable); the chart value is agent.defaults.<key>.
func fleet(row int, key, variable string) *Setting {
	return &Setting{Row: row, Key: key, Variable: variable, ChartValue: "agent.defaults." + key}
}

// rows is the registry: the keys in registry order (spec 01 §2; the count is
// pinned by the test that holds that table).
var rows = []Row{
	{Name: "inject", Grammar: knob.Enum("inject.value", `"true" or "false"`, "true", "false"), BuiltInDoc: "absent = not asking", Scope: ScopePod,
		Checks: []string{"inject.value"}, GrammarText: `"true" or "false"`,
		Doc: `"true" asks for injection; "false" or absent leaves the pod untouched`},
	{Name: "source", Grammar: knob.Source, Setting: fleet(13, "source", "DYNAMIC_CONFIG_AGENT_SOURCE"), PerRender: true, Tiers: fleetOnly, BuiltInDoc: "none", Scope: ScopeEach,
		Checks:      []string{"source.value", "pin.source", "source.required", "render.source-required", "gate.source-deny", "gate.source-allow"},
		GrammarText: "consul, vault, config-server, firestore, git, redis, etcd, nats or s3",
		Doc:         "the store the document is read from (the fleet default answers for the default render only)",
		Agent:       arg(1, "--source", AgentBoth, FormatAlways)},
	{Name: "endpoint", Grammar: knob.Plain, PerRender: true, Tiers: store, NamedTiers: store, BuiltInDoc: "none", Scope: ScopeEach,
		StoreShaped: true, Pair: EndpointSecret,
		Checks:      []string{"pin.endpoint", "pair-pin.endpoint", "endpoint.required", "render.endpoint-required", "endpoint.both"},
		GrammarText: "store address", Doc: "the store's address, passed as --endpoint",
		Agent: arg(2, "--endpoint", AgentBoth, FormatValue)},
	{Name: "endpoint-secret", Named: Step{6, 3}, Grammar: knob.SecretRef, PerRender: true, Tiers: store, NamedTiers: store, BuiltInDoc: "none", Scope: ScopeEach,
		StoreShaped: true, Pair: Endpoint,
		Checks:      []string{"secret-ref.form", "pin.endpoint-secret", "pair-pin.endpoint"},
		GrammarText: "<secret-name>/<key>", Doc: "the store's address from a Secret key (env DYNAMIC_CONFIG_AGENT_ENDPOINT) instead of --endpoint"},
	perStoreString("key", knob.Plain, "none", "document key", "the document's key in the store, passed as --key",
		"pin.key", "key.required", "render.key-required").with(arg(3, "--key", AgentBoth, FormatAlways)),
	{Name: "path", Grammar: knob.FilePath, Setting: fleet(14, "path", "DYNAMIC_CONFIG_AGENT_PATH"), PerRender: true, Tiers: storeFlt, TierNote: "no tier for named renders", BuiltInDoc: "none", Scope: ScopeEach,
		Checks:      []string{"pin.path", "path.required", "path.shape", "path.reserved", "render.path-required", "render.path-directory", "output.duplicate"},
		GrammarText: "absolute file path in a directory of its own",
		Doc:         "the rendered file (--out); its directory is the shared volume's mount path; the extension picks the format",
		Agent:       arg(4, "--out", AgentBoth, FormatAlways)},
	{Name: "mode", Default: Step{12, 1}, Grammar: knob.Enum("mode.value", `init, sidecar or both`, "init", "sidecar", "both"), Setting: fleet(7, "mode", "DYNAMIC_CONFIG_AGENT_MODE"), Tiers: storeFlt, BuiltIn: "sidecar", BuiltInDoc: "sidecar", Scope: ScopePod,
		Checks: []string{"mode.value", "pin.mode"}, GrammarText: "init, sidecar or both",
		Doc: "which agents: a one-shot init agent, a watching agent, or both"},
	{Name: "watch-seconds", Default: Step{13, 1}, Named: Step{5, 1}, Grammar: knob.Number{Check: "watch-seconds.value", Expect: "whole seconds", Max: knob.MaxUint64}.Grammar(), Setting: fleet(6, "watchSeconds", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS"), PerRender: true, Tiers: storeFlt, NamedTiers: storeFlt, BuiltIn: "15", BuiltInDoc: "15",
		Scope: ScopeEach, Checks: []string{"watch-seconds.value", "pin.watch-seconds"},
		GrammarText: "whole seconds", Doc: "how often the watching agent polls the store (--watch)",
		Agent: arg(27, "--watch", AgentWatching, FormatAlways)},
	{Name: "timeout", Named: Step{12, 1}, Grammar: knob.Number{Check: "timeout.value", Expect: `whole seconds, like "30"`, Max: knob.MaxUint64,
		ZeroCheck: "timeout.zero", ZeroExpect: `a zero timeout is no deadline at all; give whole seconds above 0, like "30"`}.Grammar(), PerRender: true, BuiltInDoc: "not sent", Scope: ScopeEach, ScopeNote: "watching agents",
		Checks: []string{"timeout.value", "timeout.zero"}, GrammarText: "whole seconds above 0",
		Doc:   "the watching agent's request deadline (--timeout)",
		Agent: arg(38, "--timeout", AgentWatching, FormatValue)},
	{Name: "agent-image", Grammar: knob.Plain, BuiltInDoc: "installation image", Scope: ScopeDefault,
		Checks: []string{"agent-image.not-allowed"}, GrammarText: "image reference starting with an allowed prefix",
		Doc: "replaces the agent image of the default render's agents (webhook.agentImageAllow)"},
	perStoreString("section", knob.Plain, "whole document", "section key", "a section of the document to render (--section)", "pin.section").with(arg(5, "--section", AgentBoth, FormatValue)),
	perStoreString("auth", knob.Plain, "not sent", "store-specific method", "the authentication method (--auth)", "pin.auth", "ssh-secret.auth").with(arg(6, "--auth", AgentBoth, FormatValue)),
	perStoreString("auth-mount", knob.Plain, "not sent", "mount path or method name", "vault auth mount path / consul auth-method name (--auth-mount)", "pin.auth-mount").with(arg(7, "--auth-mount", AgentBoth, FormatValue)),
	perStoreString("auth-role", knob.Plain, "not sent", "role", "the role to authenticate as (--auth-role)", "pin.auth-role").with(arg(8, "--auth-role", AgentBoth, FormatValue)),
	perStoreString("auth-username", knob.Plain, "not sent", "user name", "the user to authenticate as (--auth-username)", "pin.auth-username").with(arg(9, "--auth-username", AgentBoth, FormatValue)),
	perStoreString("auth-token-path", knob.Plain, "not sent", "file path", "a token file overriding the service-account token (--auth-token-path)", "pin.auth-token-path").with(arg(10, "--auth-token-path", AgentBoth, FormatValue)),
	perStoreString("namespace", knob.Plain, "not sent", "Vault Enterprise namespace", "the Vault Enterprise namespace (--namespace)", "pin.namespace").with(arg(11, "--namespace", AgentBoth, FormatValue)),
	perStoreString("ref", knob.Plain, "not sent", "git ref", "the git ref to read (--ref)", "pin.ref").with(arg(12, "--ref", AgentBoth, FormatValue)),
	perStoreString("api-url", knob.Plain, "not sent", "URL", "firestore emulator / S3-compatible endpoint URL (--api-url)", "pin.api-url").with(arg(13, "--api-url", AgentBoth, FormatValue)),
	perStoreString("token-secret", knob.SecretRef, "none", "<secret-name>/<key>", "a token from a Secret key (env DYNAMIC_CONFIG_AGENT_TOKEN)", "secret-ref.form", "pin.token-secret").at(Step{6, 1}),
	perStoreString("password-secret", knob.SecretRef, "none", "<secret-name>/<key>", "a password from a Secret key (env DYNAMIC_CONFIG_AGENT_PASSWORD)", "secret-ref.form", "pin.password-secret").at(Step{6, 2}),
	perStoreString("ca-configmap", knob.ConfigMapRef, "none", "<configmap-name> or <configmap-name>/<key>", "a private CA from a ConfigMap (--ca; key default ca.crt)", "object-ref.form", "pin.ca-configmap", "tls-skip-verify.with-ca").with(arg(20, "--ca", AgentBoth, FormatFile)).at(Step{6, 4}),
	perStoreString("tls-secret", knob.SecretName, "none", "Secret name", "a kubernetes.io/tls client certificate Secret (--tls-cert, --tls-key)", "secret-name.form", "pin.tls-secret").with(arg(26, "--tls-cert", AgentBoth, FormatPlan)).at(Step{6, 7}),
	perStoreString("ssh-secret", knob.SecretObject, "none", "<secret-name> or <secret-name>/<key>", "an SSH private key from a Secret (--ssh-key; key default ssh-privatekey)", "object-ref.form", "pin.ssh-secret", "ssh-secret.auth").with(arg(19, "--ssh-key", AgentBoth, FormatFile)).at(Step{6, 5}),
	{Name: "volume-medium", Default: Step{19, 1}, Grammar: knob.Enum("volume-medium.value", `memory (default) or disk`, "memory", "disk"), Setting: fleet(9, "volumeMedium", "DYNAMIC_CONFIG_AGENT_VOLUME_MEDIUM"), Tiers: storeFlt, BuiltIn: "memory", BuiltInDoc: "memory", Scope: ScopePod,
		Checks: []string{"volume-medium.value", "pin.volume-medium"}, GrammarText: "memory or disk",
		Doc: "where the shared volume lives: memory (tmpfs) or node disk"},
	{Name: "native-sidecar", Default: Step{20, 1}, Grammar: knob.Bool, Setting: fleet(8, "nativeSidecar", "DYNAMIC_CONFIG_AGENT_NATIVE_SIDECAR"), Tiers: storeFlt, BuiltIn: "false", BuiltInDoc: "false", Scope: ScopePod,
		Checks: []string{"bool.value", "pin.native-sidecar"}, GrammarText: `"true" or "false"`,
		Doc: "watching agents go to initContainers with restartPolicy Always"},
	{Name: "agent-cpu-request", Grammar: knob.Quantity, Setting: fleet(1, "cpuRequest", "DYNAMIC_CONFIG_AGENT_CPU_REQUEST"), Tiers: storeFlt, BuiltIn: "10m", BuiltInDoc: "10m", Scope: ScopePod,
		Checks:      []string{"pin.agent-cpu-request", "quantity.value", "agent-cpu.request-above-limit"},
		GrammarText: "Kubernetes quantity", Doc: "the agents' CPU request"},
	{Name: "agent-memory-request", Grammar: knob.Quantity, Setting: fleet(2, "memoryRequest", "DYNAMIC_CONFIG_AGENT_MEMORY_REQUEST"), Tiers: storeFlt, BuiltIn: "32Mi", BuiltInDoc: "32Mi", Scope: ScopePod,
		Checks:      []string{"pin.agent-memory-request", "quantity.value", "agent-memory.request-above-limit"},
		GrammarText: "Kubernetes quantity", Doc: "the agents' memory request"},
	{Name: "agent-cpu-limit", Grammar: knob.Quantity, Setting: fleet(3, "cpuLimit", "DYNAMIC_CONFIG_AGENT_CPU_LIMIT"), Tiers: storeFlt, BuiltInDoc: "none (on purpose)", Scope: ScopePod,
		Checks:      []string{"pin.agent-cpu-limit", "quantity.value"},
		GrammarText: "Kubernetes quantity", Doc: "the agents' CPU limit"},
	{Name: "agent-memory-limit", Grammar: knob.Quantity, Setting: fleet(4, "memoryLimit", "DYNAMIC_CONFIG_AGENT_MEMORY_LIMIT"), Tiers: storeFlt, BuiltIn: "64Mi", BuiltInDoc: "64Mi", Scope: ScopePod,
		Checks:      []string{"pin.agent-memory-limit", "quantity.value"},
		GrammarText: "Kubernetes quantity", Doc: "the agents' memory limit"},
	{Name: "file-mode", Default: Step{24, 1}, Named: Step{10, 1}, Grammar: knob.FileMode, Setting: fleet(5, "fileMode", "DYNAMIC_CONFIG_AGENT_FILE_MODE"), PerRender: true, Tiers: storeFlt, NamedTiers: storeFlt, BuiltInDoc: "not sent (agent's own default)",
		Scope:       ScopeEach,
		Checks:      []string{"file-mode.value", "file-mode.range", "file-mode.owner-read", "pin.file-mode"},
		GrammarText: `octal ("0640", "640", "0o640"), at most 0777, owner-read set`, Doc: "the rendered file's mode (--file-mode)",
		Agent: arg(23, "--file-mode", AgentBoth, FormatValue)},
	{Name: "agent-run-as-user", Default: Step{25, 1}, Grammar: runAs, Setting: fleet(10, "runAsUser", "DYNAMIC_CONFIG_AGENT_RUN_AS_USER"), Tiers: storeFlt, BuiltIn: "65532", BuiltInDoc: "65532", Scope: ScopePod,
		Checks: []string{"run-as.value", "run-as.root", "pin.agent-run-as-user"}, GrammarText: "UID 1–2147483647",
		Doc: "the agents' runAsUser"},
	{Name: "agent-run-as-group", Default: Step{25, 2}, Grammar: runAs, Setting: fleet(11, "runAsGroup", "DYNAMIC_CONFIG_AGENT_RUN_AS_GROUP"), Tiers: storeFlt, BuiltIn: "65532", BuiltInDoc: "65532", Scope: ScopePod,
		Checks: []string{"run-as.value", "run-as.root", "pin.agent-run-as-group"}, GrammarText: "GID 1–2147483647",
		Doc: "the agents' runAsGroup"},
	{Name: "agent-ephemeral-request", Grammar: knob.Quantity, BuiltInDoc: "none", Scope: ScopeDefault,
		Checks:      []string{"quantity.value", "agent-ephemeral.request-above-limit"},
		GrammarText: "Kubernetes quantity", Doc: "the default render's agents' ephemeral-storage request"},
	{Name: "agent-ephemeral-limit", Grammar: knob.Quantity, BuiltInDoc: "none", Scope: ScopeDefault,
		Checks: []string{"quantity.value"}, GrammarText: "Kubernetes quantity",
		Doc: "the default render's agents' ephemeral-storage limit"},
	{Name: "env-inject", Grammar: knob.Plain, BuiltInDoc: "none", Scope: ScopeDefault,
		Checks:      []string{"env-inject.mode", "env-inject.excluded", "env-inject.missing", "env-inject.no-command", "env-inject.path", "env-inject.format"},
		GrammarText: "a container name of spec.containers",
		Doc:         "that container's command is wrapped so the rendered .env file is sourced as its environment"},
	flag("env-restart", "false", ScopeDefault, "with env-inject: a liveness probe restarts the container when the file changes",
		"env-restart.needs-env-inject", "env-restart.needs-both", "env-restart.liveness"),
	{Name: "metrics-port", Default: Step{30, 1}, Grammar: knob.Number{Check: "metrics-port.value", Expect: "a port number", Max: 65535}.Grammar(), Setting: fleet(12, "metricsPort", "DYNAMIC_CONFIG_AGENT_METRICS_PORT"), PerRender: true, Tiers: storeFlt, TierNote: "named renders: annotation only",
		BuiltInDoc: "none (chart fleet default 9110)", Scope: ScopeEach,
		Checks:      []string{"metrics-port.value", "pin.metrics-port", "render.metrics-port-taken"},
		GrammarText: `port 0–65535 ("0" = no port)`,
		Doc:         "the watching agent's metrics and readiness port",
		Agent:       arg(41, "--metrics-addr", AgentWatching, FormatPlan)},
	flag("readiness", "true", ScopePod, "a readiness probe on watching agents that have a metrics port"),
	{Name: "inject-containers", Grammar: knob.Unchecked, BuiltInDoc: "every container in spec.containers", Scope: ScopePod,
		Checks:      []string{"inject-containers.empty", "inject-containers.missing"},
		GrammarText: "comma-separated container names", Doc: "only these app containers get the shared volume mount"},
	{Name: "revoke-grace", Grammar: knob.Number{Check: "revoke-grace.value", Expect: `whole seconds, like "10s"`, Max: knob.MaxUint64,
		ZeroCheck: "revoke-grace.zero", ZeroExpect: `zero leaves no time to revoke anything; give whole seconds above 0, like "10s"`,
		SuffixS: true}.Grammar(), BuiltInDoc: "not sent (agent: 5s)", Scope: ScopeDefault,
		Checks:      []string{"revoke-grace.value", "revoke-grace.zero", "revoke-grace.above-grace", "revoke-grace.needs-dynamic"},
		GrammarText: `whole seconds, optional trailing "s"`, Doc: "time the watching agent takes to revoke dynamic credentials at shutdown (--revoke-grace)",
		Agent: arg(40, "--revoke-grace", AgentWatching, FormatPlan)},
	flag("init-first", "false", ScopeDefault, "the default init agent goes first in initContainers", "init-first.sidecar"),
	{Name: "notify-http", Grammar: knob.NotifyHTTP, BuiltInDoc: "none", Scope: ScopeDefault, Checks: []string{"notify-http.init", "notify-http.url"},
		GrammarText: "http:// URL on localhost, 127.0.0.1 or [::1]", Doc: "a URL the watching agent calls after each change (--notify-http)",
		Agent: arg(32, "--notify-http", AgentWatching, FormatValue)},
	{Name: "on-drift", Grammar: knob.Enum("on-drift.value", `"warn", "repair" or "fail"`, "warn", "repair", "fail"), BuiltInDoc: "not sent (agent: warn)", Scope: ScopeDefault,
		Checks: []string{"on-drift.value"}, GrammarText: "warn, repair or fail", Doc: "what the watching agent does when the file was changed under it (--on-drift)",
		Agent: arg(33, "--on-drift", AgentWatching, FormatValue)},
	{Name: "tls-reload", Named: Step{13, 1}, Grammar: knob.Bool, PerRender: true, BuiltIn: "true", BuiltInDoc: "true", Scope: ScopeEach, ScopeNote: "watching agents",
		Checks: []string{"bool.value"}, GrammarText: `"true" or "false"`, Doc: `"false" stops that render's watching agent reloading TLS material (--no-tls-reload)`,
		Agent: arg(34, "--no-tls-reload", AgentWatching, FormatFalse)},
	{Name: "history", Grammar: knob.Number{Check: "history.value", Expect: `a count, like "3"`, Max: 10,
		ZeroCheck: "history.zero", ZeroExpect: `a count of at least 1 — drop the annotation to keep no history`,
		AboveCheck: "history.max", AboveExpect: "at most 10"}.Grammar(), BuiltInDoc: "none", Scope: ScopeDefault,
		Checks: []string{"history.value", "history.zero", "history.max", "history.disk"}, GrammarText: "count 1–10",
		Doc:   "earlier documents the watching agent keeps beside the rendered one (--history)",
		Agent: arg(35, "--history", AgentWatching, FormatValue)},
	flag("require-ack", "false", ScopeDefault, "the watching agent waits for the app's acknowledgement (--require-ack)",
		"require-ack.readiness-off", "require-ack.init").with(arg(36, "--require-ack", AgentWatching, FormatTrue)),
	flag("events", "false", ScopeDefault, "the watching agent records Kubernetes events (--events; webhook.allowEvents)", "events.not-offered").with(arg(37, "--events", AgentWatching, FormatTrue)),
	{Name: "class", Grammar: knob.Unchecked, Refusal: RefuseForbidden, BuiltInDoc: "none", Scope: ScopePod,
		Checks:      []string{"class.disabled", "class.not-found", "class.not-admitted", "class.credential-elsewhere", "class.credential-endpoint", "class.key-segment", "class.key-prefix"},
		GrammarText: "a class name", Doc: "a DynamicConfigClass of the pod's namespace, else a ClusterDynamicConfigClass, fills source, endpoint and token-secret where the pod is silent (docs/classes.md)"},
	{Name: "canary-configmap", Grammar: knob.ConfigMapRef, BuiltInDoc: "none", Scope: ScopeDefault, Checks: []string{"object-ref.form", "canary-configmap.init"},
		GrammarText: "<configmap-name> or <configmap-name>/<key>", Doc: "a ConfigMap holding the canary percentage (--canary; key default percent)",
		Agent: arg(39, "--canary", AgentWatching, FormatFile)},
	flag("agent-run-as-same-user", "false", ScopePod, "the agents take the app's runAsUser",
		"same-user.both", "same-user.no-uid", "same-user.range", "same-user.root", "pin.agent-run-as-same-user"),
	{Name: "extra-secret", Grammar: knob.SecretName, BuiltInDoc: "none", Scope: ScopeDefault, Checks: []string{"secret-name.form"},
		GrammarText: "Secret name", Doc: "a Secret mounted for the agent at /etc/dynamic-config/extra"},
	{Name: "tls-server-name", Grammar: knob.Plain, PerRender: true, BuiltInDoc: "endpoint host (agent side)", Scope: ScopeEach,
		GrammarText: "DNS name", Doc: "the server name to verify the store's certificate against (--tls-server-name)",
		Agent: arg(21, "--tls-server-name", AgentBoth, FormatValue)},
	{Name: "tls-skip-verify", Grammar: knob.Bool, PerRender: true, BuiltIn: "false", BuiltInDoc: "false", Scope: ScopeEach,
		Checks:      []string{"bool.value", "tls-skip-verify.not-offered", "tls-skip-verify.with-ca"},
		GrammarText: `"true" or "false"`, Doc: "skip verifying the store's certificate (webhook.allowTlsSkipVerify)",
		Agent: arg(22, "--tls-skip-verify", AgentBoth, FormatTrue)},
	{Name: "schema-configmap", Grammar: knob.ConfigMapRef, BuiltInDoc: "none", Scope: ScopeDefault, Checks: []string{"object-ref.form"},
		GrammarText: "<configmap-name> or <configmap-name>/<key>", Doc: "a JSON schema the document must satisfy (--schema; key default schema.json)",
		Agent: arg(25, "--schema", AgentBoth, FormatFile)},
	{Name: "startup-policy", Grammar: knob.Enum("startup-policy.value", `"allow-cached", "require-fresh" or "best-effort"`, "allow-cached", "require-fresh", "best-effort"), BuiltInDoc: "not sent (agent: allow-cached)", Scope: ScopeDefault,
		Checks: []string{"startup-policy.value"}, GrammarText: "allow-cached, require-fresh or best-effort",
		Doc:   "what the agent does when the store is unreachable at start (--startup-policy)",
		Agent: arg(14, "--startup-policy", AgentBoth, FormatValue)},
	{Name: "on-delete", Grammar: knob.Enum("on-delete.value", `"retain", "remove" or "fail"`, "retain", "remove", "fail"), BuiltInDoc: "not sent (agent: retain)", Scope: ScopeDefault,
		Checks: []string{"on-delete.value"}, GrammarText: "retain, remove or fail",
		Doc:   "what the agent does when the document is deleted in the store (--on-delete)",
		Agent: arg(15, "--on-delete", AgentBoth, FormatValue)},
	{Name: "max-document-bytes", Grammar: knob.Number{Check: "max-document-bytes.value", Expect: `a byte count above 0, like "8388608"`, Max: knob.MaxUint64,
		ZeroCheck: "max-document-bytes.value", ZeroExpect: `a byte count above 0, like "8388608"`}.Grammar(), BuiltInDoc: "not sent (agent: 8388608)", Scope: ScopeDefault,
		Checks: []string{"max-document-bytes.value"}, GrammarText: "byte count above 0",
		Doc:   "the largest document the agent accepts (--max-document-bytes)",
		Agent: arg(16, "--max-document-bytes", AgentBoth, FormatValue)},
	{Name: "max-staleness", Grammar: knob.Plain, BuiltInDoc: "none", Scope: ScopeDefault, GrammarText: "duration (the agent's grammar)",
		Doc:   "how old a cached document may be before the agent reports unready (--max-staleness)",
		Agent: arg(17, "--max-staleness", AgentBoth, FormatValue)},
	flag("meta", "false", ScopeDefault, "the watching agent writes document metadata (--meta)").with(arg(30, "--meta", AgentWatching, FormatTrue)),
	flag("dynamic", "false", ScopeDefault, "vault dynamic credentials with a lease (--dynamic)").with(arg(28, "--dynamic", AgentBoth, FormatTrue)),
	flag("revoke-on-shutdown", "true", ScopeDefault, `"false" keeps dynamic credentials valid after the pod is gone`,
		"revoke-on-shutdown.needs-dynamic").with(arg(31, "--no-revoke-on-shutdown", AgentWatching, FormatPlan)),
	{Name: "aws-secret", Grammar: knob.SecretName, Tiers: store, BuiltInDoc: "none", Scope: ScopePod, ScopeNote: "env on every agent", StoreShaped: true,
		Checks:      []string{"secret-name.form", "pin.aws-secret", "aws-secret.source"},
		GrammarText: "Secret name", Doc: "S3 credentials: env AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from that Secret on every agent"},
	{Name: "agent-env", Grammar: knob.Unchecked, TierNote: "fleet `agentEnv` is a separate, ungated layer", BuiltInDoc: "none", Scope: ScopePod,
		Checks: []string{"agent-env.entry", "agent-env.name", "agent-env.twice", "agent-env.nothing",
			"agent-env.aws", "agent-env.reserved", "gate.agent-env"},
		GrammarText: "NAME=value, NAME=value", Doc: "plain environment on every agent, after the fleet environment (webhook.agentEnvAllow)"},
	{Name: "template", Grammar: knob.Plain, PerRender: true, Tiers: store, NamedTiers: store, BuiltInDoc: "none", Scope: ScopeEach,
		StoreShaped: true, Pair: TemplateConfigMap,
		Checks:      []string{"pin.template", "pair-pin.template", "template.both"},
		GrammarText: "inline template text", Doc: "an inline template the document is rendered through (--template-inline)",
		Agent: arg(24, "--template-inline", AgentBoth, FormatPlan)},
	{Name: "template-configmap", Named: Step{6, 6}, Grammar: knob.ConfigMapRef, PerRender: true, Tiers: store, NamedTiers: store, BuiltInDoc: "none", Scope: ScopeEach,
		StoreShaped: true, Pair: Template,
		Checks:      []string{"object-ref.form", "pin.template-configmap", "pair-pin.template", "template.both"},
		GrammarText: "<configmap-name> or <configmap-name>/<key>", Doc: "a template from a ConfigMap (--template; key default template)"},
}

// runAs is the grammar of agent-run-as-user and agent-run-as-group.
var runAs = knob.Number{Check: "run-as.value", Expect: `a numeric UID/GID`, Max: 2147483647,
	ZeroCheck: "run-as.root", ZeroExpect: `the agent stays nonroot in every configuration`, ZeroBare: true}.Grammar()
