{{/*
Follower deciders (spec 09, docs/followers.md).

dynamic-config.follow: "true" when this release's decider follows a leader (decider.follow.target):
it mirrors the leader's installation; no installation ConfigMap, no check-installation hook, no
installation variables.
*/}}
{{- define "dynamic-config.follow" -}}
{{- if .Values.decider.follow.target -}}true{{- end -}}
{{- end -}}

{{/* The installation document the chart's default values render (a unit test renders a follower
with the defaults: a default changed in values.yaml fails it until this follows). */}}
{{- define "dynamic-config.follow.defaultDocument" -}}
metricsPort: "9110"
{{- end -}}

{{/* The validation problems of decider.follow, as a JSON list (joined by dynamic-config.validate). */}}
{{- define "dynamic-config.follow.problems" -}}
{{- $v := .Values -}}
{{- $f := $v.decider.follow -}}
{{- $problems := list -}}
{{- if $f.target -}}
{{- if $v.frontdoor.remote.enabled -}}
{{- $problems = append $problems "decider.follow.target and frontdoor.remote.enabled exclude each other: a remote release has no decider to follow with" -}}
{{- end -}}
{{- if not $f.tls.caSecret.name -}}
{{- $problems = append $problems (printf "decider.follow.tls.caSecret.name is required when decider.follow.target is set: the Secret holding the CA that verifies the leader %s" $f.target) -}}
{{- end -}}
{{- if not $v.cluster.name -}}
{{- $problems = append $problems "cluster.name is required when decider.follow.target is set: the follower names its cluster to the leader" -}}
{{- end -}}
{{- if not (or $f.tls.clientCertSecret.name $f.tokenSecret.name) -}}
{{- $problems = append $problems (printf "decider.follow needs tls.clientCertSecret.name or tokenSecret.name: the leader %s answers only callers it knows" $f.target) -}}
{{- end -}}
{{- /* The installation is the leader's: a value that would change this release's installation
document from the chart's own default one is refused (envPolicy.rules stays: it registers the
validating webhook, as for a remote front door). */ -}}
{{- $mine := fromYaml (include "dynamic-config.installation.document" .) -}}
{{- $defaults := fromYaml (include "dynamic-config.follow.defaultDocument" .) -}}
{{- $chartValue := dict "storeDefaults" "agent.defaults.perStore" "agentEnvAllow" "webhook.agentEnvAllow" "sourceAllow" "webhook.sourceAllow" "sourceDeny" "webhook.sourceDeny" -}}
{{- range $pair := fromYamlArray (include "dynamic-config.installation.fleetKeys" .) -}}
{{- $_ := set $chartValue (index $pair 0) (printf "agent.defaults.%s" (index $pair 1)) -}}
{{- end -}}
{{- $set := list -}}
{{- range $key := uniq (concat (keys $mine) (keys $defaults)) | sortAlpha -}}
{{- if and (ne $key "envPolicy") (ne (toJson (index $mine $key)) (toJson (index $defaults $key))) -}}
{{- $set = append $set (index $chartValue $key) -}}
{{- end -}}
{{- end -}}
{{- if $v.agent.pullSecret -}}{{- $set = append $set "agent.pullSecret" -}}{{- end -}}
{{- if ne (trim (toString $v.webhook.agentImageAllow)) "" -}}{{- $set = append $set "webhook.agentImageAllow" -}}{{- end -}}
{{- if $v.webhook.allowTlsSkipVerify -}}{{- $set = append $set "webhook.allowTlsSkipVerify" -}}{{- end -}}
{{- if $v.webhook.allowEvents -}}{{- $set = append $set "webhook.allowEvents" -}}{{- end -}}
{{- if $set -}}
{{- $problems = append $problems (printf "decider.follow.target is set: the installation is the leader's (%s); remove these installation values from this release: %s" $f.target (join ", " $set)) -}}
{{- end -}}
{{- end -}}
{{- toJson $problems -}}
{{- end -}}

{{/* The follower's process variables (spec 09 §1). */}}
{{- define "dynamic-config.follow.env" -}}
{{- $f := .Values.decider.follow -}}
- name: DYNAMIC_CONFIG_DECIDER_FOLLOW
  value: {{ $f.target | quote }}
- name: DYNAMIC_CONFIG_DECIDER_LEADER_CA
  value: {{ printf "/leader-ca/%s" $f.tls.caSecret.key | quote }}
{{- with $f.tls.serverName }}
- name: DYNAMIC_CONFIG_DECIDER_LEADER_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if $f.tls.clientCertSecret.name }}
- name: DYNAMIC_CONFIG_DECIDER_LEADER_CLIENT_CERT
  value: /leader-client/tls.crt
- name: DYNAMIC_CONFIG_DECIDER_LEADER_CLIENT_KEY
  value: /leader-client/tls.key
{{- end }}
{{- if $f.tokenSecret.name }}
- name: DYNAMIC_CONFIG_DECIDER_LEADER_TOKEN_FILE
  value: {{ printf "/leader-token/%s" $f.tokenSecret.key | quote }}
{{- end }}
- name: DYNAMIC_CONFIG_DECIDER_FOLLOWER_ID
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: DYNAMIC_CONFIG_DECIDER_STATE_DIR
  value: /var/lib/dynamic-config
- name: DYNAMIC_CONFIG_DECIDER_MAX_STALE
  value: {{ $f.maxStale | quote }}
{{- end -}}

{{- define "dynamic-config.follow.volumes" -}}
{{- $f := .Values.decider.follow -}}
- name: state
{{- if $f.stateDir.pvcName }}
  persistentVolumeClaim:
    claimName: {{ $f.stateDir.pvcName }}
{{- else }}
  emptyDir: {}
{{- end }}
- name: leader-ca
  secret:
    secretName: {{ $f.tls.caSecret.name }}
{{- if $f.tls.clientCertSecret.name }}
- name: leader-client
  secret:
    secretName: {{ $f.tls.clientCertSecret.name }}
{{- end }}
{{- if $f.tokenSecret.name }}
- name: leader-token
  secret:
    secretName: {{ $f.tokenSecret.name }}
{{- end }}
{{- end -}}

{{- define "dynamic-config.follow.volumeMounts" -}}
{{- $f := .Values.decider.follow -}}
- name: state
  mountPath: /var/lib/dynamic-config
- name: leader-ca
  mountPath: /leader-ca
  readOnly: true
{{- if $f.tls.clientCertSecret.name }}
- name: leader-client
  mountPath: /leader-client
  readOnly: true
{{- end }}
{{- if $f.tokenSecret.name }}
- name: leader-token
  mountPath: /leader-token
  readOnly: true
{{- end }}
{{- end -}}
