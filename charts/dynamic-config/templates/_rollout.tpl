{{/*
The rollout (spec 10 §2; docs/rollouts.md): rollout.* -> the rollout document (ConfigMap
<fullname>-installation, key rollout.yaml), rendered only while rollout.candidate is non-empty.
The candidate's installation values are laid over the release's one key at a time — agent's own
keys, agent.defaults', webhook's and envPolicy's (a key the candidate names replaces the value
whole; null unsets it) — and mapped as the installation is. `dynamic-config check-installation
--values` renders the same in Go (rollout.go beside this chart); `rollout promote --values`
moves the candidate by the same rule.
*/}}

{{/* The release's values with the candidate laid over, as a template context. */}}
{{- define "dynamic-config.rollout.candidateContext" -}}
{{- $c := .Values.rollout.candidate | default dict -}}
{{- $ca := $c.agent | default dict -}}
{{- $agent := deepCopy .Values.agent -}}
{{- range $k, $v := omit $ca "defaults" }}{{ $_ := set $agent $k $v }}{{ end -}}
{{- $defaults := deepCopy .Values.agent.defaults -}}
{{- range $k, $v := ($ca.defaults | default dict) }}{{ $_ := set $defaults $k $v }}{{ end -}}
{{- $_ := set $agent "defaults" $defaults -}}
{{- $webhook := deepCopy .Values.webhook -}}
{{- range $k, $v := ($c.webhook | default dict) }}{{ $_ := set $webhook $k $v }}{{ end -}}
{{- $policy := deepCopy .Values.envPolicy -}}
{{- range $k, $v := ($c.envPolicy | default dict) }}{{ $_ := set $policy $k $v }}{{ end -}}
{{- $values := deepCopy .Values -}}
{{- $_ := set $values "agent" $agent -}}
{{- $_ := set $values "webhook" $webhook -}}
{{- $_ := set $values "envPolicy" $policy -}}
{{- toYaml (dict "Values" $values) -}}
{{- end -}}

{{/* The rollout document, or nothing without a candidate. */}}
{{- define "dynamic-config.rollout.document" -}}
{{- $r := .Values.rollout -}}
{{- if $r.candidate -}}
{{- $cand := fromYaml (include "dynamic-config.rollout.candidateContext" .) -}}
{{- $v := $cand.Values -}}
# The rollout document (spec 10 §2), rendered by the chart from rollout.*: a candidate installation
# the decider decides beside the installation; `dynamic-config rollout status` says how it fares.
candidate:
  {{- include "dynamic-config.installation.document" $cand | nindent 2 }}
  environment:
    DYNAMIC_CONFIG_AGENT_IMAGE: {{ include "dynamic-config.agentImage" $cand | quote }}
    DYNAMIC_CONFIG_AGENT_PULL_SECRET: {{ $v.agent.pullSecret | default "" | quote }}
    DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW: {{ $v.webhook.agentImageAllow | toString | quote }}
    DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY: {{ $v.webhook.allowTlsSkipVerify | ternary "true" "false" | quote }}
    DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS: {{ or $v.webhook.allowEvents $v.agent.events.enabled | ternary "true" "false" | quote }}
{{- with $r.stage }}
stage: {{ . }}
{{- end }}
{{- with $r.canary }}
canary:
  percent: {{ .percent | default 0 }}
{{- with .namespaces }}
  namespaces: {{ toJson . }}
{{- end }}
{{- with .clusters }}
  clusters: {{ toJson . }}
{{- end }}
{{- end }}
{{- with $r.guard }}
{{- with .newRefusals }}
guard:
  newRefusals: {{ . }}
{{- end }}
{{- end }}
{{- end -}}
{{- end -}}
