{{/*
The workload values cascade (spec 07 §6.6, seed 001), implemented once:

  chart base -> global -> common -> component -> component.container

Every key has exactly one merge rule, looked up in the table below; the templates never merge
anything themselves. `<component>.inherit.<key>` opts a component out of the outer layers
(global, common) for that key: true (both, the default), false (neither), or
{global: <bool>, common: <bool>}. The chart base (restricted security contexts, the grace
period) is not an inherited layer and always applies. The container layer takes only the
container-scoped keys and always takes its component's values.
*/}}

{{/* key: merge rule. map = deep merge, nearer wins; list = concatenated outer -> inner;
scalar = the nearest layer that sets it; byName = map of entities, an entry replaces the outer
entry of the same name whole; whole = the nearest layer that sets it replaces it whole. */}}
{{- define "dynamic-config.cascade.rules" -}}
env: map
labels: map
podAnnotations: map
nodeSelector: map
resources: map
securityContext: map
podSecurityContext: map
tolerations: list
imagePullSecrets: list
envFrom: list
topologySpreadConstraints: list
priorityClassName: scalar
terminationGracePeriodSeconds: scalar
dnsPolicy: scalar
extraVolumes: byName
extraVolumeMounts: byName
affinity: whole
{{- end -}}

{{/* The keys the container layer may carry. */}}
{{- define "dynamic-config.cascade.containerKeys" -}}
[env, envFrom, resources, securityContext, extraVolumeMounts]
{{- end -}}

{{/* The components of the cascade. */}}
{{- define "dynamic-config.cascade.components" -}}
[decider, frontdoor, checkInstallation, installProof, audit]
{{- end -}}

{{/*
deepMerge: .a overlaid with .b, recursively for maps; any other value of .b (false and 0
included) replaces the one of .a. Returns JSON.
*/}}
{{- define "dynamic-config.deepMerge" -}}
{{- $out := deepCopy (default (dict) .a) -}}
{{- range $k, $v := (default (dict) .b) -}}
{{- $old := index $out $k -}}
{{- if and (kindIs "map" $v) (kindIs "map" $old) -}}
{{- $_ := set $out $k (fromJson (include "dynamic-config.deepMerge" (dict "a" $old "b" $v))) -}}
{{- else -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
cascade.inherit: whether component .component takes layer .layer ("global" or "common") for
key .key. Prints "true" or nothing.
*/}}
{{- define "dynamic-config.cascade.inherit" -}}
{{- $c := index .root.Values .component -}}
{{- $inherit := default (dict) $c.inherit -}}
{{- if not (hasKey $inherit .key) -}}true
{{- else -}}
{{- $v := index $inherit .key -}}
{{- if kindIs "bool" $v -}}{{- if $v -}}true{{- end -}}
{{- else if kindIs "map" $v -}}
{{- if not (hasKey $v .layer) -}}true{{- else if index $v .layer -}}true{{- end -}}
{{- else -}}true
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
cascade.layers: the layers component .component reads for key .key, outer to inner, as a JSON
list of {path, values}. The chart base (.base) comes first when given.
*/}}
{{- define "dynamic-config.cascade.layers" -}}
{{- $root := .root -}}
{{- $c := index $root.Values .component -}}
{{- $layers := list -}}
{{- if hasKey (default (dict) .base) .key -}}
{{- $layers = append $layers (dict "path" "chart" "values" .base) -}}
{{- end -}}
{{- range $layer := list "global" "common" -}}
{{- if include "dynamic-config.cascade.inherit" (dict "root" $root "component" $.component "key" $.key "layer" $layer) -}}
{{- $layers = append $layers (dict "path" $layer "values" (default (dict) (index $root.Values $layer))) -}}
{{- end -}}
{{- end -}}
{{- $layers = append $layers (dict "path" .component "values" $c) -}}
{{- if has .key (fromYamlArray (include "dynamic-config.cascade.containerKeys" .)) -}}
{{- $layers = append $layers (dict "path" (printf "%s.container" .component) "values" (default (dict) $c.container)) -}}
{{- end -}}
{{- toJson $layers -}}
{{- end -}}

{{/*
cascade: the merged values of every key of the table for one component.
Call with (dict "root" $ "component" "decider" "base" (dict ...)). Returns JSON:
{key: merged value}; maps and byName keys always present (maybe empty), lists always
present, scalars and affinity present only when some layer sets them.
*/}}
{{- define "dynamic-config.cascade" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $base := default (dict) .base -}}
{{- /* computed once per render and component/base; values never change within a render */ -}}
{{- if not (hasKey $root "dynamicConfigCascade") -}}{{- $_ := set $root "dynamicConfigCascade" dict -}}{{- end -}}
{{- $cacheKey := printf "%s/%s" $component (toJson $base | sha1sum) -}}
{{- if not (hasKey $root.dynamicConfigCascade $cacheKey) -}}
{{- $out := dict -}}
{{- range $key, $rule := fromYaml (include "dynamic-config.cascade.rules" .) -}}
{{- $layers := fromJsonArray (include "dynamic-config.cascade.layers" (dict "root" $root "component" $component "key" $key "base" $base)) -}}
{{- if eq $rule "map" -}}
{{- $acc := dict -}}
{{- range $layers -}}
{{- $v := index .values $key -}}
{{- if kindIs "map" $v -}}
{{- $acc = fromJson (include "dynamic-config.deepMerge" (dict "a" $acc "b" $v)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out $key $acc -}}
{{- else if eq $rule "list" -}}
{{- $acc := fromJsonArray "[]" -}}
{{- range $layers -}}
{{- $v := index .values $key -}}
{{- if kindIs "slice" $v -}}
{{- $acc = concat $acc $v -}}
{{- end -}}
{{- end -}}
{{- /* sprig's concat returns nil for empty lists */ -}}
{{- $_ := set $out $key (default (fromJsonArray "[]") $acc) -}}
{{- else if eq $rule "byName" -}}
{{- $acc := dict -}}
{{- range $layers -}}
{{- $v := index .values $key -}}
{{- if kindIs "map" $v -}}
{{- range $name, $entity := $v -}}
{{- $_ := set $acc $name $entity -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out $key $acc -}}
{{- else if eq $rule "scalar" -}}
{{- range $layers -}}
{{- if hasKey .values $key -}}
{{- $v := index .values $key -}}
{{- if not (or (kindIs "invalid" $v) (and (kindIs "string" $v) (eq $v ""))) -}}
{{- $_ := set $out $key $v -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- else if eq $rule "whole" -}}
{{- range $layers -}}
{{- $v := index .values $key -}}
{{- if and (kindIs "map" $v) (gt (len $v) 0) -}}
{{- $_ := set $out $key $v -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set $root.dynamicConfigCascade $cacheKey (toJson $out) -}}
{{- end -}}
{{- get $root.dynamicConfigCascade $cacheKey -}}
{{- end -}}

{{/*
cascade.envList: the cascade's env map as a container env list, sorted by name. A value is a
word, number or boolean (printed as text) or {valueFrom: {...}}.
*/}}
{{- define "dynamic-config.cascade.envList" -}}
{{- range $name, $v := . }}
- name: {{ $name }}
{{- if kindIs "map" $v }}
  valueFrom:
    {{- toYaml $v.valueFrom | nindent 4 }}
{{- else }}
  value: {{ include "dynamic-config.scalarText" $v | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* cascade.volumes: a byName map as a list of volumes (or mounts), sorted by name. */}}
{{- define "dynamic-config.cascade.byNameList" -}}
{{- range $name, $v := . }}
- {{ toYaml (merge (dict "name" $name) (deepCopy $v)) | nindent 2 | trim }}
{{- end }}
{{- end -}}

{{/*
cascade.problems: the refusals of every env layer (the cascade's, then frontdoor.extraEnv and
decider.extraEnv, audit.extraEnv) and of the three components' extraArgs for what the chart sets
itself (_owned.tpl), in layer order, as a JSON list of messages.
*/}}
{{- define "dynamic-config.cascade.problems" -}}
{{- $root := . -}}
{{- $problems := list -}}
{{- $layers := list (dict "path" "global" "values" (default (dict) $root.Values.global)) (dict "path" "common" "values" (default (dict) $root.Values.common)) -}}
{{- range $c := fromYamlArray (include "dynamic-config.cascade.components" $root) -}}
{{- $cv := default (dict) (index $root.Values $c) -}}
{{- $layers = append $layers (dict "path" $c "values" $cv) -}}
{{- $layers = append $layers (dict "path" (printf "%s.container" $c) "values" (default (dict) $cv.container)) -}}
{{- end -}}
{{- range $c := list "frontdoor" "decider" "audit" -}}
{{- $layers = append $layers (dict "path" $c "key" "extraEnv" "values" (default (dict) (index $root.Values $c))) -}}
{{- end -}}
{{- range $l := $layers -}}
{{- $key := default "env" $l.key -}}
{{- $env := index $l.values $key -}}
{{- if kindIs "map" $env -}}
{{- range $name, $ignored := $env -}}
{{- with include "dynamic-config.ownedEnvUse" $name -}}
{{- $problems = append $problems (printf "%s.%s.%s is set by the chart; set %s instead" $l.path $key $name .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $c := list "frontdoor" "decider" "audit" -}}
{{- with (index $root.Values $c).extraArgs -}}
{{- $problems = concat $problems (fromJsonArray (include "dynamic-config.ownedArgProblems" (dict "component" $c "args" .))) -}}
{{- end -}}
{{- end -}}
{{- toJson $problems -}}
{{- end -}}
