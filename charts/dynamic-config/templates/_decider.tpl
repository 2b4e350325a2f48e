{{/* The decider container's own pieces (spec 07 §1.1, §6.2). */}}

{{/* Process settings (not installation settings): listeners, TLS, mTLS, token, reload. */}}
{{- define "dynamic-config.decider.env" -}}
{{- $d := .Values.decider -}}
- name: DYNAMIC_CONFIG_DECIDER_ADDR
  value: {{ printf "0.0.0.0:%v" $d.port | quote }}
- name: DYNAMIC_CONFIG_DECIDER_METRICS_ADDR
  value: {{ printf "0.0.0.0:%v" $d.metrics.port | quote }}
- name: DYNAMIC_CONFIG_DECIDER_TLS_CERT
  value: /tls/tls.crt
- name: DYNAMIC_CONFIG_DECIDER_TLS_KEY
  value: /tls/tls.key
{{- if eq (include "dynamic-config.tlsMode" .) "selfRotate" }}
# the front door's CA leader fills the Secret after the first start: wait for it
- name: DYNAMIC_CONFIG_DECIDER_TLS_WAIT
  value: "true"
{{- end }}
{{- if $d.auth.mtls }}
- name: DYNAMIC_CONFIG_DECIDER_TLS_CLIENT_CA
  value: /tls/ca.crt
{{- end }}
{{- if $d.auth.token.enabled }}
- name: DYNAMIC_CONFIG_DECIDER_TOKEN_FILE
  value: /decider-token/token
{{- end }}
{{- with .Values.cluster.name }}
- name: DYNAMIC_CONFIG_DECIDER_CLUSTER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if $d.callers.secretName }}
- name: DYNAMIC_CONFIG_DECIDER_CALLERS_FILE
  value: {{ printf "/decider-callers/%s" $d.callers.key | quote }}
{{- end }}
- name: DYNAMIC_CONFIG_DECIDER_REFLECTION
  value: {{ $d.reflection | ternary "true" "false" | quote }}
- name: DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL
  value: {{ $d.reloadInterval | quote }}
{{- end -}}

{{- define "dynamic-config.decider.ports" -}}
- name: grpc
  containerPort: {{ .Values.decider.port }}
  protocol: TCP
- name: metrics
  containerPort: {{ .Values.decider.metrics.port }}
  protocol: TCP
{{- end -}}

{{/* HTTP probes on the metrics listener: kubelet gRPC probes cannot present a client certificate. */}}
{{- define "dynamic-config.decider.probes" -}}
readinessProbe:
  httpGet: {path: /readyz, port: metrics, scheme: HTTP}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /healthz, port: metrics, scheme: HTTP}
  periodSeconds: 10
  failureThreshold: 3
{{- end -}}

{{/* The installation ConfigMap as a DIRECTORY (no subPath), so updates reach the pod. */}}
{{- define "dynamic-config.decider.volumes" -}}
{{- $full := include "dynamic-config.fullname" . -}}
{{- if include "dynamic-config.follow" . }}
{{- include "dynamic-config.follow.volumes" . }}
{{- else }}
- name: installation
  configMap:
    name: {{ $full }}-installation
{{- end }}
- name: tls
  secret:
    secretName: {{ include "dynamic-config.deciderTLSSecret" . }}
{{- if .Values.decider.auth.token.enabled }}
- name: decider-token
  secret:
    secretName: {{ .Values.decider.auth.token.secretName }}
{{- end }}
{{- if .Values.decider.callers.secretName }}
- name: decider-callers
  secret:
    secretName: {{ .Values.decider.callers.secretName }}
{{- end }}
{{- end -}}

{{- define "dynamic-config.decider.volumeMounts" -}}
{{- if include "dynamic-config.follow" . }}
{{- include "dynamic-config.follow.volumeMounts" . }}
{{- else }}
- name: installation
  mountPath: /etc/dynamic-config/
  readOnly: true
{{- end }}
- name: tls
  mountPath: /tls
  readOnly: true
{{- if .Values.decider.auth.token.enabled }}
- name: decider-token
  mountPath: /decider-token
  readOnly: true
{{- end }}
{{- if .Values.decider.callers.secretName }}
- name: decider-callers
  mountPath: /decider-callers
  readOnly: true
{{- end }}
{{- end -}}
