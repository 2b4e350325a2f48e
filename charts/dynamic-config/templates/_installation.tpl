{{/*
The installation (spec 02): chart values -> the installation document (ConfigMap
<fullname>-installation, key installation.yaml) and the decider's env-only variables.
This is the mapping of spec 07 §1.6/§6.2 that `dynamic-config check-installation --values`
implements in Go (the package beside this chart, installation.go); the two must stay identical.

Document keys, in the order of spec 02 §2.6, with the agent.defaults value each comes from,
and the built-ins below: written by `make docs` (cmd/chartkeys) from the installation table;
`make check-docs` fails when they differ.
*/}}
{{- define "dynamic-config.installation.fleetKeys" -}}
- [cpuRequest, cpuRequest]
- [memoryRequest, memoryRequest]
- [cpuLimit, cpuLimit]
- [memoryLimit, memoryLimit]
- [fileMode, fileMode]
- [watchSeconds, watchSeconds]
- [mode, mode]
- [nativeSidecar, nativeSidecar]
- [volumeMedium, volumeMedium]
- [runAsUser, runAsUser]
- [runAsGroup, runAsGroup]
- [metricsPort, metricsPort]
- [source, source]
- [path, path]
- [agentEnv, env]
- [overridable, overridable]
- [matchGuaranteed, matchGuaranteed]
{{- end -}}

{{/* The built-ins the chart's own defaults equal: written only when the value differs. */}}
{{- define "dynamic-config.installation.builtIns" -}}
cpuRequest: 10m
memoryRequest: 32Mi
memoryLimit: 64Mi
{{- end -}}

{{/* A gate value (string or map namespace -> list or string) as document YAML, or nothing. */}}
{{- define "dynamic-config.installation.gate" -}}
{{- $key := .key -}}
{{- $v := .value -}}
{{- if kindIs "map" $v -}}
{{- if gt (len $v) 0 }}
{{ $key }}:
{{- range $ns, $names := $v }}
  {{ toJson $ns }}: {{ if kindIs "slice" $names }}{{ toJson $names }}{{ else }}{{ include "dynamic-config.scalarText" $names | toJson }}{{ end }}
{{- end }}
{{- end }}
{{- else if ne (trim (include "dynamic-config.scalarText" $v)) "" }}
{{ $key }}: {{ include "dynamic-config.scalarText" $v | toJson }}
{{- end -}}
{{- end -}}

{{/* The installation document. */}}
{{- define "dynamic-config.installation.document" -}}
{{- $d := .Values.agent.defaults -}}
{{- $builtIns := fromYaml (include "dynamic-config.installation.builtIns" .) -}}
# The dynamic-config installation document (spec 02), rendered by the chart from its values.
# The decider re-reads it on change; `dynamic-config check-installation` validates it.
{{- range $pair := fromYamlArray (include "dynamic-config.installation.fleetKeys" .) }}
{{- $docKey := index $pair 0 -}}
{{- $text := include "dynamic-config.scalarText" (index $d (index $pair 1)) -}}
{{- if and (ne (trim $text) "") (or (not (hasKey $builtIns $docKey)) (ne (trim $text) (index $builtIns $docKey))) }}
{{ $docKey }}: {{ toJson $text }}
{{- end }}
{{- end }}
{{- $ps := $d.perStore -}}
{{- if kindIs "map" $ps }}
{{- if gt (len $ps) 0 }}
storeDefaults:
{{- range $store, $group := $ps }}
{{- if kindIs "map" $group }}
  {{ toJson $store }}:
{{- if eq (len $group) 0 }} {}{{ end }}
{{- range $knob, $value := $group }}
    {{ toJson $knob }}: {{ include "dynamic-config.scalarText" $value | toJson }}
{{- end }}
{{- else }}
  {{ toJson $store }}: {{ include "dynamic-config.scalarText" $group | toJson }}
{{- end }}
{{- end }}
{{- end }}
{{- else if ne (trim (include "dynamic-config.scalarText" $ps)) "" }}
storeDefaults: {{ include "dynamic-config.scalarText" $ps | toJson }}
{{- end }}
{{- include "dynamic-config.installation.gate" (dict "key" "agentEnvAllow" "value" .Values.webhook.agentEnvAllow) }}
{{- include "dynamic-config.installation.gate" (dict "key" "sourceAllow" "value" .Values.webhook.sourceAllow) }}
{{- include "dynamic-config.installation.gate" (dict "key" "sourceDeny" "value" .Values.webhook.sourceDeny) }}
{{- with .Values.envPolicy.rules }}
envPolicy:
{{- with $.Values.envPolicy.targets }}
  targets: {{ toJson . }}
{{- end }}
  rules: {{ toJson . }}
{{- end }}
{{- end -}}

{{/*
The installation variables: the document locator and the env-only settings (spec 02 §2.2–2.3).
The decider and the check-installation hook get exactly these.
*/}}
{{- define "dynamic-config.installation.env" -}}
- name: DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE
  value: /etc/dynamic-config/installation.yaml
- name: DYNAMIC_CONFIG_AGENT_IMAGE
  value: {{ include "dynamic-config.agentImage" . | quote }}
{{- with .Values.agent.pullSecret }}
- name: DYNAMIC_CONFIG_AGENT_PULL_SECRET
  value: {{ . | quote }}
{{- end }}
- name: DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW
  value: {{ .Values.webhook.agentImageAllow | toString | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY
  value: {{ .Values.webhook.allowTlsSkipVerify | ternary "true" "false" | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS
  value: {{ or .Values.webhook.allowEvents .Values.agent.events.enabled | ternary "true" "false" | quote }}
{{- if .Values.webhook.classes.enabled }}
- name: DYNAMIC_CONFIG_WEBHOOK_CLASSES
  value: "true"
{{- end }}
{{- end -}}
