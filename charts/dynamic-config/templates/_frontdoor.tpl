{{/* The front door container's own pieces (spec 07 §1.2, §6.2). It gets NO installation variable. */}}

{{- define "dynamic-config.frontdoor.env" -}}
{{- $f := .Values.frontdoor -}}
{{- $d := .Values.decider -}}
- name: DYNAMIC_CONFIG_WEBHOOK_ADDR
  value: {{ printf "0.0.0.0:%v" $f.port | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR
  value: {{ printf "0.0.0.0:%v" $f.metrics.port | quote }}
{{- if eq (include "dynamic-config.tlsMode" .) "selfRotate" }}
{{- $full := include "dynamic-config.fullname" . }}
{{- $sr := .Values.tls.selfRotate }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE
  value: "true"
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_NAMESPACE
  value: {{ .Release.Namespace | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_SECRET
  value: {{ include "dynamic-config.selfRotateSecret" . | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_LEASE
  value: {{ include "dynamic-config.selfRotateSecret" . | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HOSTS
  value: {{ printf "%s-frontdoor.%s.svc,%s-frontdoor.%s" $full .Release.Namespace $full .Release.Namespace | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_MUTATING_WEBHOOK
  value: {{ $full | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_VALIDATING_WEBHOOK
  value: {{ printf "%s-env-policy" $full | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CA_VALIDITY
  value: {{ $sr.caValidity | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CERT_VALIDITY
  value: {{ $sr.certValidity | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_INTERVAL
  value: {{ $sr.interval | quote }}
{{- if not (include "dynamic-config.remote" .) }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_SECRET
  value: {{ include "dynamic-config.deciderTLSSecret" . | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_HOSTS
  value: {{ printf "%s-decider.%s.svc,%s-decider.%s" $full .Release.Namespace $full .Release.Namespace | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_SECRET
  value: {{ include "dynamic-config.clientTLSSecret" . | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_NAME
  value: {{ printf "%s-frontdoor-client" $full | quote }}
- name: DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HANDOVER
  value: {{ $sr.handover | quote }}
{{- end }}
{{- else }}
- name: DYNAMIC_CONFIG_WEBHOOK_TLS_CERT
  value: /tls/tls.crt
- name: DYNAMIC_CONFIG_WEBHOOK_TLS_KEY
  value: /tls/tls.key
{{- end }}
{{- $r := $f.remote }}
- name: DYNAMIC_CONFIG_DECIDER_TARGET
{{- if $r.enabled }}
  value: {{ $r.deciderTarget | quote }}
{{- else }}
  value: {{ printf "dns:///%s:%v" (include "dynamic-config.deciderHost" .) $d.port | quote }}
{{- end }}
{{- with .Values.cluster.name }}
- name: DYNAMIC_CONFIG_FRONTDOOR_CLUSTER_NAME
  value: {{ . | quote }}
{{- end }}
- name: DYNAMIC_CONFIG_DECIDER_TIMEOUT
  value: {{ $f.deciderTimeout | quote }}
- name: DYNAMIC_CONFIG_ON_DECIDER_ERROR
  value: {{ $f.onDeciderError | quote }}
- name: DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE
  value: {{ .Values.envPolicy.onDeciderError | quote }}
{{- if $r.enabled }}
- name: DYNAMIC_CONFIG_DECIDER_CA
  value: {{ printf "/decider-ca/%s" $r.caSecret.key | quote }}
{{- with $r.serverName }}
- name: DYNAMIC_CONFIG_DECIDER_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if $r.clientCertSecret.name }}
- name: DYNAMIC_CONFIG_DECIDER_CLIENT_CERT
  value: /decider-tls/tls.crt
- name: DYNAMIC_CONFIG_DECIDER_CLIENT_KEY
  value: /decider-tls/tls.key
{{- end }}
{{- if $r.tokenSecret.name }}
- name: DYNAMIC_CONFIG_DECIDER_TOKEN_FILE
  value: {{ printf "/decider-token/%s" $r.tokenSecret.key | quote }}
{{- end }}
{{- else }}
- name: DYNAMIC_CONFIG_DECIDER_CA
  value: /decider-tls/ca.crt
{{- if $d.auth.mtls }}
- name: DYNAMIC_CONFIG_DECIDER_CLIENT_CERT
  value: /decider-tls/tls.crt
- name: DYNAMIC_CONFIG_DECIDER_CLIENT_KEY
  value: /decider-tls/tls.key
{{- end }}
{{- if $d.auth.token.enabled }}
- name: DYNAMIC_CONFIG_DECIDER_TOKEN_FILE
  value: /decider-token/token
{{- end }}
{{- end }}
{{- if $f.clientCA.configMap }}
- name: DYNAMIC_CONFIG_WEBHOOK_CLIENT_CA
  value: {{ printf "/client-ca/%s" $f.clientCA.key | quote }}
{{- end }}
{{- /* Last, so that positional patches of the variables above (kustomize overlays) hold. */}}
{{- with $f.decisionCache }}
- name: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE
  value: {{ .enabled | quote }}
- name: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_ENTRIES
  value: {{ int .maxEntries | quote }}
- name: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES
  value: {{ int64 .maxBytes | quote }}
- name: DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_STALE_IF_ERROR
  value: {{ .staleIfError | quote }}
{{- end }}
{{- end -}}

{{- define "dynamic-config.frontdoor.ports" -}}
- name: https
  containerPort: {{ .Values.frontdoor.port }}
  protocol: TCP
- name: metrics
  containerPort: {{ .Values.frontdoor.metrics.port }}
  protocol: TCP
{{- end -}}

{{/* HTTPS probes on the admission listener; /readyz does not depend on the decider (spec 07 §3.1). */}}
{{- define "dynamic-config.frontdoor.probes" -}}
readinessProbe:
  httpGet: {path: /readyz, port: https, scheme: HTTPS}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /healthz, port: https, scheme: HTTPS}
  periodSeconds: 10
  failureThreshold: 3
{{- end -}}

{{/* The serving pair at /tls; the client pair and the CA that verifies the decider at /decider-tls;
     with frontdoor.clientCA.configMap, the CA of the API server's client certificate at /client-ca. */}}
{{- define "dynamic-config.frontdoor.volumes" -}}
{{- if ne (include "dynamic-config.tlsMode" .) "selfRotate" }}
- name: tls
  secret:
    secretName: {{ include "dynamic-config.frontdoorTLSSecret" . }}
{{- end }}
{{- $r := .Values.frontdoor.remote }}
{{- if $r.enabled }}
- name: decider-ca
  secret:
    secretName: {{ $r.caSecret.name }}
{{- if $r.clientCertSecret.name }}
- name: decider-tls
  secret:
    secretName: {{ $r.clientCertSecret.name }}
{{- end }}
{{- if $r.tokenSecret.name }}
- name: decider-token
  secret:
    secretName: {{ $r.tokenSecret.name }}
{{- end }}
{{- else }}
- name: decider-tls
  secret:
    secretName: {{ include "dynamic-config.clientTLSSecret" . }}
{{- if .Values.decider.auth.token.enabled }}
- name: decider-token
  secret:
    secretName: {{ .Values.decider.auth.token.secretName }}
{{- end }}
{{- end }}
{{- with .Values.frontdoor.clientCA.configMap }}
- name: client-ca
  configMap:
    name: {{ . }}
{{- end }}
{{- end -}}

{{- define "dynamic-config.frontdoor.volumeMounts" -}}
{{- if ne (include "dynamic-config.tlsMode" .) "selfRotate" }}
- name: tls
  mountPath: /tls
  readOnly: true
{{- end }}
{{- $r := .Values.frontdoor.remote }}
{{- if $r.enabled }}
- name: decider-ca
  mountPath: /decider-ca
  readOnly: true
{{- end }}
{{- if or (not $r.enabled) $r.clientCertSecret.name }}
- name: decider-tls
  mountPath: /decider-tls
  readOnly: true
{{- end }}
{{- if or (and (not $r.enabled) .Values.decider.auth.token.enabled) (and $r.enabled $r.tokenSecret.name) }}
- name: decider-token
  mountPath: /decider-token
  readOnly: true
{{- end }}
{{- if .Values.frontdoor.clientCA.configMap }}
- name: client-ca
  mountPath: /client-ca
  readOnly: true
{{- end }}
{{- end -}}
