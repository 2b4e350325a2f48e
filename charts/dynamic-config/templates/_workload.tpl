{{/*
The pod template shared by the decider, the front door and the check-installation hook Job.
Everything a user may set comes from the cascade (_cascade.tpl); the chart adds its own env,
args, ports, probes, volumes and mounts.

Call with a dict:
  root, component         the root context and the component name
  args                    list of container args (<component>.extraArgs follow)
  env                     YAML list of the chart's env entries (rendered first; then the
                          logging (and, on the decider and the front door, tracing) variables, then the cascade's env with <component>.extraEnv
                          over it)
  ports, probes           YAML (container ports list; probe fields), optional
  volumes, volumeMounts   YAML lists of the chart's own volumes and mounts
  topologySpread          bool: add the chart's spread constraints
  restartPolicy           optional
  serviceAccount          ServiceAccount suffix (default: the component)
  containerName           container name (default: the component)
  labelComponent          app.kubernetes.io/component (default: the component)
  automountToken          bool: mount the ServiceAccount token (the decider watching classes)
*/}}
{{- define "dynamic-config.podTemplate" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $base := dict "securityContext" (fromYaml (include "dynamic-config.baseContainerSecurityContext" $root)) "podSecurityContext" (fromYaml (include "dynamic-config.basePodSecurityContext" $root)) "terminationGracePeriodSeconds" 40 -}}
{{- $c := fromJson (include "dynamic-config.cascade" (dict "root" $root "component" $component "base" $base)) -}}
{{- $own := default dict (index $root.Values $component) -}}
{{- $selector := fromYaml (include "dynamic-config.selectorLabels" (dict "root" $root "component" (.labelComponent | default $component))) -}}
{{- $spread := fromJsonArray "[]" -}}
{{- if .topologySpread -}}
{{- range $key := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" -}}
{{- $spread = append $spread (dict "maxSkew" 1 "topologyKey" $key "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" (dict "matchLabels" $selector)) -}}
{{- end -}}
{{- end -}}
{{- $spread = concat $spread $c.topologySpreadConstraints | default (fromJsonArray "[]") -}}
{{- $volumes := default (fromJsonArray "[]") (concat (fromYamlArray (default "[]" .volumes)) (fromYamlArray (include "dynamic-config.cascade.byNameList" $c.extraVolumes | default "[]"))) -}}
{{- $mounts := default (fromJsonArray "[]") (concat (fromYamlArray (default "[]" .volumeMounts)) (fromYamlArray (include "dynamic-config.cascade.byNameList" $c.extraVolumeMounts | default "[]"))) -}}
metadata:
  labels:
    {{- toYaml (merge (deepCopy $selector) $c.labels) | nindent 4 }}
  {{- with $c.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "dynamic-config.fullname" $root }}-{{ .serviceAccount | default $component }}
  automountServiceAccountToken: {{ .automountToken | default false }}
  enableServiceLinks: false
  {{- with .restartPolicy }}
  restartPolicy: {{ . }}
  {{- end }}
  {{- with $c.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with $c.dnsPolicy }}
  dnsPolicy: {{ . }}
  {{- end }}
  {{- if hasKey $c "terminationGracePeriodSeconds" }}
  terminationGracePeriodSeconds: {{ include "dynamic-config.scalarText" $c.terminationGracePeriodSeconds }}
  {{- end }}
  securityContext:
    {{- toYaml $c.podSecurityContext | nindent 4 }}
  {{- with $c.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $c.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $c.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $c.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $spread }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ .containerName | default $component }}
      image: {{ include "dynamic-config.image" $root | quote }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args:
        {{- toYaml (concat .args (default list $own.extraArgs)) | nindent 8 }}
      env:
        {{- with .env | trim }}
        {{- . | nindent 8 }}
        {{- end }}
        - name: DYNAMIC_CONFIG_LOG_LEVEL
          value: {{ $root.Values.logging.level | quote }}
        - name: DYNAMIC_CONFIG_LOG_FORMAT
          value: {{ $root.Values.logging.format | quote }}
        {{- if and $root.Values.tracing.enabled (has $component (list "decider" "frontdoor")) }}
        - name: DYNAMIC_CONFIG_OTLP_ENDPOINT
          value: {{ $root.Values.tracing.endpoint | quote }}
        - name: DYNAMIC_CONFIG_TRACE_SAMPLE_RATIO
          value: {{ $root.Values.tracing.sampleRatio | toString | quote }}
        {{- end }}
        {{- if dig "limits" "memory" "" ($c.resources | default dict) }}
        {{- /* The binary holds its heap to 90 % of this (GOMEMLIMIT unset; issue 23). */}}
        - name: DYNAMIC_CONFIG_MEMORY_LIMIT
          valueFrom:
            resourceFieldRef:
              resource: limits.memory
              divisor: "1"
        {{- end }}
        {{- with merge (deepCopy (default dict $own.extraEnv)) (default dict $c.env) }}
        {{- include "dynamic-config.cascade.envList" . | trim | nindent 8 }}
        {{- end }}
      {{- with $c.envFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .ports }}
      ports:
        {{- . | trim | nindent 8 }}
      {{- end }}
      {{- with .probes }}
      {{- . | trim | nindent 6 }}
      {{- end }}
      {{- with $c.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $c.securityContext | nindent 8 }}
      terminationMessagePolicy: FallbackToLogsOnError
      {{- with $mounts }}
      volumeMounts:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  {{- with $volumes }}
  volumes:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
workloadLabels: the labels of a Deployment or Job object: the chart's labels, plus the
cascade's labels for the component (the chart's own win on a collision).
Call with (dict "root" $ "component" "decider" "labelComponent" "decider").
*/}}
{{- define "dynamic-config.workloadLabels" -}}
{{- $chart := fromYaml (include "dynamic-config.labels" (dict "root" .root "component" (.labelComponent | default .component))) -}}
{{- $c := fromJson (include "dynamic-config.cascade" (dict "root" .root "component" .component)) -}}
{{- toYaml (merge $chart $c.labels) -}}
{{- end -}}
