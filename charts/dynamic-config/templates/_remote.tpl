{{/*
Multi-cluster pieces (docs/multi-cluster.md).

dynamic-config.remote: "true" when this release is a remote front door (frontdoor.remote.enabled):
only the front door and the webhook configurations are rendered.
*/}}
{{- define "dynamic-config.remote" -}}
{{- if .Values.frontdoor.remote.enabled -}}true{{- end -}}
{{- end -}}

{{/* The validation problems of the multi-cluster values, as a JSON list (joined by dynamic-config.validate). */}}
{{- define "dynamic-config.remote.problems" -}}
{{- $v := .Values -}}
{{- $problems := list -}}
{{- $r := $v.frontdoor.remote -}}
{{- if $r.enabled -}}
{{- if not $r.deciderTarget -}}
{{- $problems = append $problems "frontdoor.remote.deciderTarget is required when frontdoor.remote.enabled is true: the decider's gRPC target in the other cluster, e.g. dns:///decider.east.example.com:9090" -}}
{{- end -}}
{{- if not $r.caSecret.name -}}
{{- $problems = append $problems "frontdoor.remote.caSecret.name is required when frontdoor.remote.enabled is true: the Secret holding the CA that verifies the decider" -}}
{{- end -}}
{{- if not (or $r.clientCertSecret.name $r.tokenSecret.name) -}}
{{- $problems = append $problems "frontdoor.remote needs clientCertSecret.name or tokenSecret.name: an exposed decider answers only callers it knows" -}}
{{- end -}}
{{- if not $v.cluster.name -}}
{{- $problems = append $problems "cluster.name is required when frontdoor.remote.enabled is true: the decider decides for the cluster the front door names" -}}
{{- end -}}
{{- if $v.decider.expose.enabled -}}
{{- $problems = append $problems "decider.expose.enabled and frontdoor.remote.enabled exclude each other: a remote release has no decider" -}}
{{- end -}}
{{- end -}}
{{- $d := $v.decider -}}
{{- if and $d.expose.enabled (not $d.auth.mtls) (not $d.callers.secretName) -}}
{{- $problems = append $problems "decider.expose.enabled needs decider.auth.mtls or decider.callers.secretName: an exposed decider must not answer anonymous calls" -}}
{{- end -}}
{{- if and $d.callers.secretName (not $r.enabled) -}}
{{- if not $v.cluster.name -}}
{{- $problems = append $problems "cluster.name is required when decider.callers.secretName is set: the decider's own cluster, which a request naming no cluster is checked against" -}}
{{- end -}}
{{- if $d.auth.token.enabled -}}
{{- $problems = append $problems "decider.callers.secretName and decider.auth.token.enabled exclude each other: list the token's SHA-256 in the callers file" -}}
{{- end -}}
{{- end -}}
{{- toJson $problems -}}
{{- end -}}

{{/*
The deadline budget (docs/multi-cluster.md "Latency budget"): the front door's decider deadline
must leave deadlineMarginMillis of a webhook's timeoutSeconds for the front door's own work and
the API server's call; otherwise a slow decider makes the API server give up first and apply the
webhook's failurePolicy instead of the front door's --on-decider-error. Arguments: dict "timeout"
(the deadline in ms), "deadline" (frontdoor.deciderTimeout as written), "seconds" (timeoutSeconds)
and "key" (the value that holds it). Prints the problem, or nothing.
*/}}
{{- define "dynamic-config.deadlineMarginMillis" -}}1000{{- end -}}
{{- define "dynamic-config.deadlineProblem" -}}
{{- $margin := float64 (include "dynamic-config.deadlineMarginMillis" .) -}}
{{- $limit := subf (mulf (float64 .seconds) 1000.0) $margin -}}
{{- if gt (float64 .timeout) $limit -}}
{{- printf "frontdoor.deciderTimeout (%s = %vms) must be at most %s (%vs = %vms) minus a %vms margin = %vms, so the front door answers before the API server gives up" (toString .deadline) .timeout .key (toString .seconds) (mulf (float64 .seconds) 1000.0) $margin $limit -}}
{{- end -}}
{{- end -}}
