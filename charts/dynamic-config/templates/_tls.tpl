{{/*
Self-signed TLS (the default; spec 07 §6.2): one CA from genCA and three certificates signed by
it, kept in three Secrets (tls.crt, tls.key, ca.crt):
  <fullname>-frontdoor-tls         serving pair of the front door (the webhooks' caBundle is its CA)
  <fullname>-decider-tls           serving pair of the decider; its ca.crt verifies client certificates
  <fullname>-frontdoor-client-tls  the front door's client pair for mTLS; its ca.crt verifies the decider
On upgrade the three existing Secrets are reused as they are (found with lookup) when they all
hold a pair and share one ca.crt; otherwise a new CA and three new pairs are issued together.
The CA key is never stored. The result is computed once per render and cached on the root
context, so every template sees the same CA.

Returns JSON {ca, frontdoor: {crt, key}, decider: {crt, key}, client: {crt, key}}, every value
base64-encoded PEM.
*/}}
{{- define "dynamic-config.tls" -}}
{{- if not (hasKey . "dynamicConfigTLS") -}}
{{- $ns := .Release.Namespace -}}
{{- $names := include "dynamic-config.tlsSecretNames" . | fromJson -}}
{{- $found := dict -}}
{{- $cas := list -}}
{{- range $role, $name := $names -}}
{{- $s := lookup "v1" "Secret" $ns $name -}}
{{- if and $s $s.data (index $s.data "tls.crt") (index $s.data "tls.key") (index $s.data "ca.crt") -}}
{{- $_ := set $found $role (dict "crt" (index $s.data "tls.crt") "key" (index $s.data "tls.key")) -}}
{{- $cas = append $cas (index $s.data "ca.crt") -}}
{{- end -}}
{{- end -}}
{{- $result := dict -}}
{{- if and (eq (len $found) (len $names)) (eq (len (uniq $cas)) 1) -}}
{{- $result = merge (dict "ca" (first $cas)) $found -}}
{{- else -}}
{{- $days := int .Values.webhook.selfSignedDays -}}
{{- $full := include "dynamic-config.fullname" . -}}
{{- $ca := genCA (printf "%s-ca" $full) $days -}}
{{- $fd := genSignedCert (printf "%s-frontdoor.%s.svc" $full $ns) nil (list (printf "%s-frontdoor.%s.svc" $full $ns) (printf "%s-frontdoor.%s" $full $ns)) $days $ca -}}
{{- $dc := genSignedCert (printf "%s-decider.%s.svc" $full $ns) nil (list (printf "%s-decider.%s.svc" $full $ns) (printf "%s-decider.%s" $full $ns)) $days $ca -}}
{{- $cl := genSignedCert (printf "%s-frontdoor-client" $full) nil nil $days $ca -}}
{{- $result = dict "ca" ($ca.Cert | b64enc) "frontdoor" (dict "crt" ($fd.Cert | b64enc) "key" ($fd.Key | b64enc)) "decider" (dict "crt" ($dc.Cert | b64enc) "key" ($dc.Key | b64enc)) "client" (dict "crt" ($cl.Cert | b64enc) "key" ($cl.Key | b64enc)) -}}
{{- end -}}
{{- $_ := set . "dynamicConfigTLS" $result -}}
{{- end -}}
{{- toJson (get . "dynamicConfigTLS") -}}
{{- end -}}

{{/*
The TLS mode of the admission path: tls.mode, where the reference chart's spellings
webhook.certManager.enabled and webhook.selfRotate.enabled (true) select the same modes.
*/}}
{{- define "dynamic-config.tlsMode" -}}
{{- if or (eq .Values.tls.mode "selfRotate") .Values.webhook.selfRotate.enabled -}}selfRotate
{{- else if or (eq .Values.tls.mode "certManager") .Values.webhook.certManager.enabled -}}certManager
{{- else if eq .Values.tls.mode "existingSecrets" -}}existingSecrets
{{- else -}}selfSigned
{{- end -}}
{{- end -}}

{{/* The Secret holding the self-rotated CA, and the Lease electing the replica that rotates it. */}}
{{- define "dynamic-config.selfRotateSecret" -}}{{ include "dynamic-config.fullname" . }}-frontdoor-ca{{- end -}}

{{/* The webhooks' clientConfig.caBundle line: the chart's CA (selfSigned) or yours
(existingSecrets: tls.existingSecrets.caBundle, PEM); none in the other modes (selfRotate writes it
through the API server, cert-manager injects it; so GitOps tools see no drift). */}}
{{- define "dynamic-config.caBundle" -}}
{{- $mode := include "dynamic-config.tlsMode" . -}}
{{- if eq $mode "selfSigned" -}}
caBundle: {{ (fromJson (include "dynamic-config.tls" .)).ca }}
{{- else if eq $mode "existingSecrets" -}}
caBundle: {{ .Values.tls.existingSecrets.caBundle | trim | b64enc }}
{{- end -}}
{{- end -}}

{{/* The cert-manager CA-injection annotation of the webhook configurations. */}}
{{- define "dynamic-config.webhookAnnotations" -}}
{{- if eq (include "dynamic-config.tlsMode" .) "certManager" -}}
annotations:
  cert-manager.io/inject-ca-from: {{ printf "%s/%s-frontdoor" .Release.Namespace (include "dynamic-config.fullname" .) }}
{{- end -}}
{{- end -}}

{{/* The chart's TLS Secrets by role, as JSON: the three, or only the front door's serving pair in a
remote release (its decider CA and client pair come from frontdoor.remote's Secrets); in selfRotate
mode without the front door's serving pair (the front door signs its own). */}}
{{- define "dynamic-config.tlsSecretNames" -}}
{{- $names := dict "frontdoor" (include "dynamic-config.frontdoorTLSSecret" .) -}}
{{- if not (include "dynamic-config.remote" .) -}}
{{- $_ := set $names "decider" (include "dynamic-config.deciderTLSSecret" .) -}}
{{- $_ := set $names "client" (include "dynamic-config.clientTLSSecret" .) -}}
{{- end -}}
{{- if eq (include "dynamic-config.tlsMode" .) "selfRotate" -}}
{{- $_ := unset $names "frontdoor" -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}
