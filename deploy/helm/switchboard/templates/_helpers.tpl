{{/*
Expand the name of the chart.
*/}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
If release name contains chart name it will be used as a full name.
*/}}
{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Create chart name and version as used by the chart label.
*/}}
{{- define "switchboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "switchboard.labels" -}}
helm.sh/chart: {{ include "switchboard.chart" . }}
{{ include "switchboard.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels
*/}}
{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "switchboard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "switchboard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The container image, defaulting the tag to the chart's appVersion.
*/}}
{{- define "switchboard.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}

{{/*
The non-secret environment as a YAML map of variable name to string: the ConfigMap's data, and the
migration Job's env (the Job runs before the ConfigMap exists on a first install). Refuses secrets
and the variables the chart derives from other values.
*/}}
{{- define "switchboard.configEnv" -}}
{{- $derived := list "PORT" "MIGRATIONS_RUN_ON_BOOT" "SHUTDOWN_DELAY_SECONDS" "SHUTDOWN_GRACE_SECONDS" }}
{{- $secret := list "DATABASE_URL" "REDIS_URL" "METRICS_TOKEN" }}
{{- range $name, $value := .Values.config }}
{{- if has $name $derived }}
{{- fail (printf "config.%s is set by the chart from other values; see README.md" $name) }}
{{- end }}
{{- if or (has $name $secret) (regexMatch "(_KEY|_SECRET|_TOKEN|_PASSWORD)$" $name) }}
{{- fail (printf "config.%s looks like a secret: reference it through secretEnv instead" $name) }}
{{- end }}
{{- end -}}
PORT: {{ .Values.containerPort | toString | quote }}
MIGRATIONS_RUN_ON_BOOT: {{ .Values.migrations.runOnBoot | toString | quote }}
SHUTDOWN_DELAY_SECONDS: {{ .Values.shutdown.delaySeconds | toString | quote }}
SHUTDOWN_GRACE_SECONDS: {{ .Values.shutdown.graceSeconds | toString | quote }}
{{- range $name, $value := .Values.config }}
{{- if ne (toString $value) "" }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Environment variables from existing Secrets. Pass a dict with "entries" (a list of {name,
secretName, key, optional}) and "skip" (names to leave out).
*/}}
{{- define "switchboard.secretEnvVars" -}}
{{- range .entries }}
{{- if not (has .name $.skip) }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secretName }}
      key: {{ .key }}
      {{- if get . "optional" }}
      optional: true
      {{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Stops rendering when nothing provides DATABASE_URL: without it every pod would start its own
embedded database, and replicas would not share any state.
*/}}
{{- define "switchboard.requireDatabase" -}}
{{- $names := list }}
{{- range .Values.secretEnv }}
{{- $names = append $names .name }}
{{- end }}
{{- range .Values.extraEnv }}
{{- $names = append $names .name }}
{{- end }}
{{- if and (not (has "DATABASE_URL" $names)) (empty .Values.extraEnvFrom) }}
{{- fail "DATABASE_URL must come from a Secret: add it to secretEnv (see README.md)" }}
{{- end }}
{{- end }}

{{/*
Seconds Kubernetes waits after starting termination before it kills the container: the preStop
sleep, the service's own delay and drain of requests in flight, then closing pools.
*/}}
{{- define "switchboard.terminationGracePeriodSeconds" -}}
{{- with .Values.shutdown }}
{{- add .preStopSleepSeconds .delaySeconds .graceSeconds .closeMarginSeconds }}
{{- end }}
{{- end }}

{{/*
The effective minimum number of replicas, to decide whether a PodDisruptionBudget makes sense.
*/}}
{{- define "switchboard.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}
{{- .Values.autoscaling.minReplicas }}
{{- else }}
{{- .Values.replicaCount }}
{{- end }}
{{- end }}

{{/*
Stops rendering unless the declarative configuration has exactly one source.
*/}}
{{- define "switchboard.configurationSource" -}}
{{- with .Values.configuration }}
{{- $sources := 0 }}
{{- if not (empty .document) }}{{ $sources = add1 $sources }}{{ end }}
{{- if .existingConfigMap.name }}{{ $sources = add1 $sources }}{{ end }}
{{- if .existingSecret.name }}{{ $sources = add1 $sources }}{{ end }}
{{- if ne (int $sources) 1 }}
{{- fail "configuration.enabled needs exactly one of configuration.document, configuration.existingConfigMap.name, configuration.existingSecret.name" }}
{{- end }}
{{- end }}
{{- end }}
