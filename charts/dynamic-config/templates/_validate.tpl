{{/*
Cross-field validation (spec 07 §6.4), aggregated: every problem is collected and the render
fails once, listing them all. values.schema.json checks shapes, enums and patterns first; the
messages here cover what a schema cannot say (and the number-instead-of-string case when the
schema is skipped). Included at the top of every template; runs once per render.
*/}}
{{- define "dynamic-config.validate" -}}
{{- if not (hasKey . "dynamicConfigValidated") -}}
{{- $_ := set . "dynamicConfigValidated" true -}}
{{- $problems := list -}}
{{- $v := .Values -}}

{{- $modes := list -}}
{{- if ne $v.tls.mode "selfSigned" -}}{{- $modes = append $modes $v.tls.mode -}}{{- end -}}
{{- if $v.webhook.certManager.enabled -}}{{- $modes = append $modes "certManager" -}}{{- end -}}
{{- if $v.webhook.selfRotate.enabled -}}{{- $modes = append $modes "selfRotate" -}}{{- end -}}
{{- if gt (len (uniq $modes)) 1 -}}
{{- $problems = append $problems (printf "tls.mode: %s, webhook.certManager.enabled: %v and webhook.selfRotate.enabled: %v ask for different TLS modes; set tls.mode only" $v.tls.mode $v.webhook.certManager.enabled $v.webhook.selfRotate.enabled) -}}
{{- end -}}
{{- if and (not $v.agent.digest) (eq (trim (toString $v.agent.tag)) "latest") -}}
{{- $problems = append $problems "agent.tag: latest is refused; pin a version or a digest" -}}
{{- end -}}

{{- $timeout := include "dynamic-config.durationMillis" $v.frontdoor.deciderTimeout -}}
{{- if $timeout -}}
{{- with include "dynamic-config.deadlineProblem" (dict "timeout" $timeout "deadline" $v.frontdoor.deciderTimeout "seconds" $v.webhook.timeoutSeconds "key" "webhook.timeoutSeconds") -}}
{{- $problems = append $problems . -}}
{{- end -}}
{{- if $v.envPolicy.rules -}}
{{- with include "dynamic-config.deadlineProblem" (dict "timeout" $timeout "deadline" $v.frontdoor.deciderTimeout "seconds" $v.envPolicy.webhook.timeoutSeconds "key" "envPolicy.webhook.timeoutSeconds") -}}
{{- $problems = append $problems . -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- if and $v.webhook.certManager.enabled (not $v.webhook.certManager.issuerRef.name) -}}
{{- $problems = append $problems "webhook.certManager.issuerRef.name is required when webhook.certManager.enabled is true" -}}
{{- else if and (eq $v.tls.mode "certManager") (not $v.webhook.certManager.issuerRef.name) -}}
{{- $problems = append $problems "webhook.certManager.issuerRef.name is required when tls.mode is certManager" -}}
{{- end -}}

{{- if eq $v.tls.mode "existingSecrets" -}}
{{- $e := $v.tls.existingSecrets -}}
{{- $full := include "dynamic-config.fullname" . -}}
{{- $roles := list "frontdoor" -}}
{{- if not (include "dynamic-config.remote" .) -}}{{- $roles = list "frontdoor" "decider" "client" -}}{{- end -}}
{{- /* Secrets the chart renders in some mode: one of yours under such a name would be deleted by
the next switch away from that mode, or fail the switch to it. */ -}}
{{- $owned := list -}}
{{- range $base := list "frontdoor" "decider" "frontdoor-client" -}}
{{- range $suffix := list "-tls" "-rotated-tls" "-cert-manager-tls" -}}
{{- $owned = append $owned (printf "%s-%s%s" $full $base $suffix) -}}
{{- end -}}
{{- end -}}
{{- $owned = append $owned (printf "%s-frontdoor-ca" $full) -}}
{{- range $role := $roles -}}
{{- $name := index $e $role -}}
{{- if not $name -}}
{{- $problems = append $problems (printf "tls.existingSecrets.%s is required when tls.mode is existingSecrets: the name of a kubernetes.io/tls Secret in the release namespace (tls.crt, tls.key, ca.crt)" $role) -}}
{{- else if has $name $owned -}}
{{- $problems = append $problems (printf "tls.existingSecrets.%s: %s is a name the chart manages in another TLS mode (a switch of tls.mode would delete or overwrite it); name your Secret otherwise" $role $name) -}}
{{- end -}}
{{- end -}}
{{- if not (contains "-----BEGIN CERTIFICATE-----" (toString $e.caBundle)) -}}
{{- $problems = append $problems "tls.existingSecrets.caBundle is required when tls.mode is existingSecrets: the PEM of the CA that signed the front door's serving certificate (the webhooks' caBundle)" -}}
{{- end -}}
{{- end -}}

{{- if and $v.tracing.enabled (not $v.tracing.endpoint) -}}
{{- $problems = append $problems "tracing.endpoint is required when tracing.enabled is true: the URL of an OTLP/HTTP receiver, such as http://otel-collector.observability:4318" -}}
{{- end -}}

{{- /* string-typed installation values that YAML may have read as numbers: a file mode (0640 is
read as 416) and memory quantities (64 would be 64 bytes). Watch seconds and CPU quantities take a
whole number as well: there it is unambiguous. */ -}}
{{- $examples := dict "fileMode" "0640" "memoryRequest" "64Mi" "memoryLimit" "64Mi" "file-mode" "0640" "agent-memory-request" "64Mi" "agent-memory-limit" "64Mi" -}}
{{- range $key := list "memoryRequest" "memoryLimit" "fileMode" -}}
{{- if include "dynamic-config.isNumber" (index $v.agent.defaults $key) -}}
{{- $problems = append $problems (printf "agent.defaults.%s: quote it (%q), or YAML reads it as a number" $key (index $examples $key)) -}}
{{- end -}}
{{- end -}}
{{- if kindIs "map" $v.agent.defaults.perStore -}}
{{- range $store, $group := $v.agent.defaults.perStore -}}
{{- if kindIs "map" $group -}}
{{- range $knob := list "agent-memory-request" "agent-memory-limit" "file-mode" -}}
{{- if include "dynamic-config.isNumber" (index $group $knob) -}}
{{- $problems = append $problems (printf "agent.defaults.perStore.%s.%s: quote it (%q), or YAML reads it as a number" $store $knob (index $examples $knob)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- $problems = concat $problems (fromJsonArray (include "dynamic-config.cascade.problems" .)) -}}
{{- $problems = concat $problems (fromJsonArray (include "dynamic-config.remote.problems" .)) -}}
{{- $problems = concat $problems (fromJsonArray (include "dynamic-config.follow.problems" .)) -}}

{{- if $problems -}}
{{- fail (printf "\n%s" (join "\n" $problems)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
