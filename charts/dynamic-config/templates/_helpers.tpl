{{/*
Names, labels and images. Every template starts with
  {{- include "dynamic-config.validate" . }}
so a bad value fails the render whichever template is rendered first.
*/}}

{{/* <fullname>: the release name when it already says dynamic-config, else <release>-dynamic-config. */}}
{{- define "dynamic-config.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 42 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 42 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "dynamic-config.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of one component. Call with (dict "root" $ "component" "decider"). */}}
{{- define "dynamic-config.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Object labels of one component (component may be "" for chart-wide objects). */}}
{{- define "dynamic-config.labels" -}}
helm.sh/chart: {{ include "dynamic-config.chart" .root }}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* The dynamic-config binary's image: the tag defaults to v<appVersion>, the project
version, with "+" (build metadata, not allowed in an OCI tag) as "_" like `make image`. */}}
{{- define "dynamic-config.image" -}}
{{- $i := .Values.image -}}
{{- if $i.digest -}}
{{- printf "%s@%s" $i.repository $i.digest -}}
{{- else -}}
{{- printf "%s:%s" $i.repository (default (printf "v%s" .Chart.AppVersion | replace "+" "_") $i.tag) -}}
{{- end -}}
{{- end -}}

{{/* The agent image the decider injects (DYNAMIC_CONFIG_AGENT_IMAGE). */}}
{{- define "dynamic-config.agentImage" -}}
{{- $a := .Values.agent -}}
{{- if trim (toString $a.digest) -}}
{{- printf "%s@%s" $a.image $a.digest -}}
{{- else if trim (toString $a.tag) -}}
{{- printf "%s:%s" $a.image (toString $a.tag) -}}
{{- else -}}
{{- $a.image -}}
{{- end -}}
{{- end -}}

{{/*
scalarText: the literal text of a scalar value as the installation document must carry it.
Helm reads values as JSON, so whole numbers arrive as float64: print them as integers
(2147483647, not 2.147483647e+09). Booleans print as true/false; nil prints "".
*/}}
{{- define "dynamic-config.scalarText" -}}
{{- if kindIs "invalid" . -}}
{{- else if kindIs "string" . -}}
{{- . -}}
{{- else if kindIs "bool" . -}}
{{- ternary "true" "false" . -}}
{{- else if or (kindIs "float64" .) (kindIs "float32" .) -}}
{{- if eq (float64 (int64 .)) (float64 .) -}}{{- printf "%d" (int64 .) -}}{{- else -}}{{- toString . -}}{{- end -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/* isNumber: "true" when the value arrived as a YAML number. */}}
{{- define "dynamic-config.isNumber" -}}
{{- if or (kindIs "float64" .) (kindIs "float32" .) (kindIs "int" .) (kindIs "int64" .) (kindIs "int32" .) (kindIs "uint64" .) -}}true{{- end -}}
{{- end -}}

{{/*
durationMillis: a Go duration ("2s", "1500ms", "1m30s") in milliseconds, or "" when it is not
one. Used to compare frontdoor.deciderTimeout with the webhooks' timeoutSeconds.
*/}}
{{- define "dynamic-config.durationMillis" -}}
{{- $s := trim (toString .) -}}
{{- if regexMatch "^([0-9]+(\\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$" $s -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]*)?(ns|us|µs|ms|s|m|h)" $s -1 -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]*)?" . | float64 -}}
{{- $unit := trimPrefix (regexFind "^[0-9]+(\\.[0-9]*)?" .) . -}}
{{- $scale := get (dict "ns" 0.000001 "us" 0.001 "µs" 0.001 "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0) $unit -}}
{{- $total = addf $total (mulf $num $scale) -}}
{{- end -}}
{{- $total -}}
{{- end -}}
{{- end -}}

{{/*
Names of the three TLS Secrets (spec 07 §6.2): the front door's serving pair, the decider's serving
pair, the front door's client pair. Each TLS mode has names of its own (issue 40), so that a switch
of tls.mode by `helm upgrade` never patches a Secret into another type (selfSigned's are
kubernetes.io/tls, selfRotate's Opaque) nor meets one that another owner wrote (cert-manager's are
not Helm's): the new mode's Secrets are created beside the old ones, the pods roll onto them, and
Helm deletes the old mode's (cert-manager's by the prune-secrets hook, secret-prune-hook.yaml).
  selfSigned       <fullname>-frontdoor-tls, <fullname>-decider-tls, <fullname>-frontdoor-client-tls
  selfRotate       (none: the front door signs its own), <fullname>-decider-rotated-tls,
                   <fullname>-frontdoor-client-rotated-tls
  certManager      <fullname>-frontdoor-cert-manager-tls, <fullname>-decider-cert-manager-tls,
                   <fullname>-frontdoor-client-cert-manager-tls
  existingSecrets  tls.existingSecrets.frontdoor, .decider, .client (yours; the chart renders none)
*/}}
{{- define "dynamic-config.tlsSecretSuffix" -}}
{{- $mode := include "dynamic-config.tlsMode" . -}}
{{- if eq $mode "selfRotate" -}}-rotated-tls{{- else if eq $mode "certManager" -}}-cert-manager-tls{{- else -}}-tls{{- end -}}
{{- end -}}
{{- define "dynamic-config.frontdoorTLSSecret" -}}
{{- if eq (include "dynamic-config.tlsMode" .) "existingSecrets" -}}{{ .Values.tls.existingSecrets.frontdoor }}
{{- else -}}{{ include "dynamic-config.fullname" . }}-frontdoor{{ include "dynamic-config.tlsSecretSuffix" . }}{{- end -}}
{{- end -}}
{{- define "dynamic-config.deciderTLSSecret" -}}
{{- if eq (include "dynamic-config.tlsMode" .) "existingSecrets" -}}{{ .Values.tls.existingSecrets.decider }}
{{- else -}}{{ include "dynamic-config.fullname" . }}-decider{{ include "dynamic-config.tlsSecretSuffix" . }}{{- end -}}
{{- end -}}
{{- define "dynamic-config.clientTLSSecret" -}}
{{- if eq (include "dynamic-config.tlsMode" .) "existingSecrets" -}}{{ .Values.tls.existingSecrets.client }}
{{- else -}}{{ include "dynamic-config.fullname" . }}-frontdoor-client{{ include "dynamic-config.tlsSecretSuffix" . }}{{- end -}}
{{- end -}}
{{/* The Secrets cert-manager issues in certManager mode (what the prune-secrets hook deletes), as JSON. */}}
{{- define "dynamic-config.certManagerSecrets" -}}
{{- $full := include "dynamic-config.fullname" . -}}
{{- $names := list (printf "%s-frontdoor-cert-manager-tls" $full) -}}
{{- if not (include "dynamic-config.remote" .) -}}
{{- $names = concat $names (list (printf "%s-decider-cert-manager-tls" $full) (printf "%s-frontdoor-client-cert-manager-tls" $full)) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* The decider's in-cluster DNS name (headless Service). */}}
{{- define "dynamic-config.deciderHost" -}}
{{- printf "%s-decider.%s.svc" (include "dynamic-config.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* The restricted container security context every container of the chart starts from. */}}
{{- define "dynamic-config.baseContainerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The restricted pod security context every pod of the chart starts from. */}}
{{- define "dynamic-config.basePodSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
The CEL expression of the mutating webhook's matchCondition: the object carries at least one
annotation key starting with dynamic-config.rs/ (the front door's A3 rule).
*/}}
{{- define "dynamic-config.asksExpression" -}}
object != null && has(object.metadata) && has(object.metadata.annotations) && object.metadata.annotations.exists(k, k.startsWith('dynamic-config.rs/'))
{{- end }}

{{/*
installProof.deadline: the install-proof Job's activeDeadlineSeconds — installProof.timeout (a
duration of s, m and h, e.g. 2m or 1m30s) in seconds, plus 60 for the pod to start and report.
*/}}
{{- define "dynamic-config.installProof.deadline" -}}
{{- $total := 0 -}}
{{- range $part := regexFindAll "[0-9]+[smh]" . -1 -}}
{{- $n := trimSuffix "s" (trimSuffix "m" (trimSuffix "h" $part)) | atoi -}}
{{- if hasSuffix "h" $part }}{{ $n = mul $n 3600 }}{{ else if hasSuffix "m" $part }}{{ $n = mul $n 60 }}{{ end -}}
{{- $total = add $total $n -}}
{{- end -}}
{{- add $total 60 -}}
{{- end -}}
