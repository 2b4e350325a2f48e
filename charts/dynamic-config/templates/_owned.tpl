{{/*
owned: what the chart sets itself on a component's container, keyed by flag: the environment
variable behind the flag and the chart value that sets it (issue 20). The cascade's env layers,
<component>.extraEnv and <component>.extraArgs may name anything else — a flag or DYNAMIC_CONFIG_*
variable the chart leaves alone, such as --drain-delay — and are refused what is listed here, with
the value to use. "*" holds the flags of every component.
*/}}
{{- define "dynamic-config.owned" -}}
"*":
  log-level: {env: DYNAMIC_CONFIG_LOG_LEVEL, use: logging.level}
  log-format: {env: DYNAMIC_CONFIG_LOG_FORMAT, use: logging.format}
  # not a flag: the binary's soft memory limit, from the container's (issue 23)
  memory-limit: {env: DYNAMIC_CONFIG_MEMORY_LIMIT, use: "<component>.resources.limits.memory (GOMEMLIMIT overrides it)"}
frontdoor:
  addr: {env: DYNAMIC_CONFIG_WEBHOOK_ADDR, use: frontdoor.port}
  metrics-addr: {env: DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR, use: frontdoor.metrics.port}
  plaintext: {env: DYNAMIC_CONFIG_WEBHOOK_PLAINTEXT, use: tls.mode (the chart always serves TLS)}
  tls-cert: {env: DYNAMIC_CONFIG_WEBHOOK_TLS_CERT, use: tls.mode}
  tls-key: {env: DYNAMIC_CONFIG_WEBHOOK_TLS_KEY, use: tls.mode}
  self-rotate: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE, use: "tls.mode: selfRotate"}
  self-rotate-namespace: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_NAMESPACE, use: "tls.mode: selfRotate (the release namespace)"}
  self-rotate-secret: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_SECRET, use: "tls.mode: selfRotate"}
  self-rotate-lease: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_LEASE, use: "tls.mode: selfRotate"}
  self-rotate-hosts: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HOSTS, use: "tls.mode: selfRotate (the front door Service's names)"}
  self-rotate-mutating-webhook: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_MUTATING_WEBHOOK, use: "tls.mode: selfRotate"}
  self-rotate-validating-webhook: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_VALIDATING_WEBHOOK, use: "tls.mode: selfRotate"}
  self-rotate-ca-validity: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CA_VALIDITY, use: tls.selfRotate.caValidity}
  self-rotate-cert-validity: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CERT_VALIDITY, use: tls.selfRotate.certValidity}
  self-rotate-interval: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_INTERVAL, use: tls.selfRotate.interval}
  self-rotate-decider-secret: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_SECRET, use: "tls.mode: selfRotate"}
  self-rotate-decider-hosts: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_HOSTS, use: "tls.mode: selfRotate (the decider Service's names)"}
  self-rotate-client-secret: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_SECRET, use: "tls.mode: selfRotate"}
  self-rotate-client-name: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_NAME, use: "tls.mode: selfRotate"}
  self-rotate-handover: {env: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HANDOVER, use: tls.selfRotate.handover}
  decider-target: {env: DYNAMIC_CONFIG_DECIDER_TARGET, use: frontdoor.remote.deciderTarget}
  cluster-name: {env: DYNAMIC_CONFIG_FRONTDOOR_CLUSTER_NAME, use: cluster.name}
  decider-timeout: {env: DYNAMIC_CONFIG_DECIDER_TIMEOUT, use: frontdoor.deciderTimeout}
  on-decider-error: {env: DYNAMIC_CONFIG_ON_DECIDER_ERROR, use: frontdoor.onDeciderError}
  on-decider-error-validate: {env: DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE, use: envPolicy.onDeciderError}
  decision-cache: {env: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE, use: frontdoor.decisionCache.enabled}
  decision-cache-max-entries: {env: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_ENTRIES, use: frontdoor.decisionCache.maxEntries}
  decision-cache-max-bytes: {env: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES, use: frontdoor.decisionCache.maxBytes}
  decision-cache-stale-if-error: {env: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_STALE_IF_ERROR, use: frontdoor.decisionCache.staleIfError}
  decider-ca: {env: DYNAMIC_CONFIG_DECIDER_CA, use: frontdoor.remote.caSecret (the chart's CA otherwise)}
  decider-server-name: {env: DYNAMIC_CONFIG_DECIDER_SERVER_NAME, use: frontdoor.remote.serverName}
  decider-client-cert: {env: DYNAMIC_CONFIG_DECIDER_CLIENT_CERT, use: frontdoor.remote.clientCertSecret or decider.auth.mtls}
  decider-client-key: {env: DYNAMIC_CONFIG_DECIDER_CLIENT_KEY, use: frontdoor.remote.clientCertSecret or decider.auth.mtls}
  decider-token-file: {env: DYNAMIC_CONFIG_DECIDER_TOKEN_FILE, use: frontdoor.remote.tokenSecret or decider.auth.token}
  decider-plaintext: {env: DYNAMIC_CONFIG_DECIDER_PLAINTEXT, use: decider.auth (the chart always speaks TLS to the decider)}
  client-ca: {env: DYNAMIC_CONFIG_WEBHOOK_CLIENT_CA, use: frontdoor.clientCA}
  otlp-endpoint: {env: DYNAMIC_CONFIG_OTLP_ENDPOINT, use: tracing.endpoint}
  trace-sample-ratio: {env: DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO, use: tracing.sampleRatio}
decider:
  addr: {env: DYNAMIC_CONFIG_DECIDER_ADDR, use: decider.port}
  metrics-addr: {env: DYNAMIC_CONFIG_DECIDER_METRICS_ADDR, use: decider.metrics.port}
  plaintext: {env: DYNAMIC_CONFIG_DECIDER_PLAINTEXT, use: decider.auth (the chart always serves TLS)}
  tls-cert: {env: DYNAMIC_CONFIG_DECIDER_TLS_CERT, use: tls.mode}
  tls-key: {env: DYNAMIC_CONFIG_DECIDER_TLS_KEY, use: tls.mode}
  tls-client-ca: {env: DYNAMIC_CONFIG_DECIDER_TLS_CLIENT_CA, use: decider.auth.mtls}
  tls-wait: {env: DYNAMIC_CONFIG_DECIDER_TLS_WAIT, use: "tls.mode: selfRotate"}
  auth-token-file: {env: DYNAMIC_CONFIG_DECIDER_TOKEN_FILE, use: decider.auth.token}
  callers: {env: DYNAMIC_CONFIG_DECIDER_CALLERS_FILE, use: decider.callers}
  cluster-name: {env: DYNAMIC_CONFIG_DECIDER_CLUSTER_NAME, use: cluster.name}
  reflection: {env: DYNAMIC_CONFIG_DECIDER_REFLECTION, use: decider.reflection}
  reload-interval: {env: DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL, use: decider.reloadInterval}
  installation: {env: DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE, use: agent.* and webhook.* (the installation ConfigMap)}
  classes: {env: DYNAMIC_CONFIG_WEBHOOK_CLASSES, use: webhook.classes.enabled}
  classes-file: {env: "", use: webhook.classes.enabled}
  otlp-endpoint: {env: DYNAMIC_CONFIG_OTLP_ENDPOINT, use: tracing.endpoint}
  trace-sample-ratio: {env: DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO, use: tracing.sampleRatio}
checkInstallation:
  installation: {env: DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE, use: agent.* and webhook.* (the installation ConfigMap)}
audit:
  webhook-configuration: {env: DYNAMIC_CONFIG_AUDIT_WEBHOOK_CONFIGURATION, use: the release's MutatingWebhookConfiguration}
  metrics-addr: {env: DYNAMIC_CONFIG_AUDIT_METRICS_ADDR, use: audit.metrics.port}
  interval: {env: DYNAMIC_CONFIG_AUDIT_INTERVAL, use: audit.interval}
  max-namespaces: {env: DYNAMIC_CONFIG_AUDIT_MAX_NAMESPACES, use: audit.maxNamespaces}
  max-events-per-pass: {env: DYNAMIC_CONFIG_AUDIT_MAX_EVENTS_PER_PASS, use: audit.maxEventsPerPass}
{{- end -}}

{{/*
ownedEnvUse: the chart value to use instead of setting variable name, "" when the chart leaves
the variable alone. Besides the table: the installation's vocabulary (DYNAMIC_CONFIG_AGENT_*,
DYNAMIC_CONFIG_WEBHOOK_* but the front door's own --kubeconfig, DYNAMIC_CONFIG_ENV_POLICY) is
the installation document's, rendered from agent.*, webhook.* and envPolicy.*.
*/}}
{{- define "dynamic-config.ownedEnvUse" -}}
{{- $name := . -}}
{{- $use := "" -}}
{{- range $component, $flags := fromYaml (include "dynamic-config.owned" dict) -}}
{{- range $flag, $o := $flags -}}
{{- if and (not $use) (eq $o.env $name) -}}{{- $use = $o.use -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $use -}}
{{- if hasPrefix "DYNAMIC_CONFIG_AGENT_" $name -}}{{- $use = "the agent.* values (an installation setting)" -}}
{{- else if and (hasPrefix "DYNAMIC_CONFIG_WEBHOOK_" $name) (ne $name "DYNAMIC_CONFIG_WEBHOOK_KUBECONFIG") -}}{{- $use = "the webhook.* values (an installation setting)" -}}
{{- else if eq $name "DYNAMIC_CONFIG_ENV_POLICY" -}}{{- $use = "envPolicy.rules" -}}
{{- end -}}
{{- end -}}
{{- $use -}}
{{- end -}}

{{/*
ownedArgProblems: the refusals of <component>.extraArgs, as a JSON list: an argument naming a
flag the chart sets (--flag, --flag=value, -flag), and an argument that is not a flag.
Call with (dict "component" "frontdoor" "args" $list).
*/}}
{{- define "dynamic-config.ownedArgProblems" -}}
{{- $problems := list -}}
{{- $owned := fromYaml (include "dynamic-config.owned" dict) -}}
{{- $flags := merge (deepCopy (index $owned .component)) (index $owned "*") -}}
{{- range $i, $arg := .args -}}
{{- $text := toString $arg -}}
{{- if not (hasPrefix "-" $text) -}}
{{- $problems = append $problems (printf "%s.extraArgs[%d] is %q: give flags only (--flag=value), the chart names the subcommand" $.component $i $text) -}}
{{- else -}}
{{- $flag := regexReplaceAll "=.*$" (trimPrefix "-" (trimPrefix "-" $text)) "" -}}
{{- with index $flags $flag -}}
{{- $problems = append $problems (printf "%s.extraArgs[%d]: --%s is set by the chart; set %s instead" $.component $i $flag .use) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $problems -}}
{{- end -}}
