{{/* The chart's name, and the release's full name (at most 63 characters). */}}
{{- define "toolwire-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "toolwire-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "toolwire-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolwire-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "toolwire-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "toolwire-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "toolwire-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "toolwire-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether the replicas share state through Redis. */}}
{{- define "toolwire-gateway.redis" -}}
{{- if or .Values.store.redis.url .Values.store.redis.existingSecret -}}true{{- end -}}
{{- end -}}

{{/* Whether /data is a PersistentVolumeClaim (one replica only). */}}
{{- define "toolwire-gateway.pvc" -}}
{{- if and .Values.persistence.enabled (le (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}

{{/* The environment variable holding an API key's hash from a Secret. */}}
{{- define "toolwire-gateway.apiKeyEnv" -}}
{{- printf "TOOLWIRE_API_KEY_%s" (regexReplaceAll "[^A-Za-z0-9]" . "_" | upper) -}}
{{- end -}}

{{/*
What no replica count or store combination may be: refused at render time,
so that a wrong one never reaches the cluster.
*/}}
{{- define "toolwire-gateway.validate" -}}
{{- $n := int .Values.replicaCount -}}
{{- if lt $n 1 -}}
{{- fail "replicaCount must be at least 1" -}}
{{- end -}}
{{- if and (gt $n 1) (not (include "toolwire-gateway.redis" .)) -}}
{{- fail (printf "store.redis is required when replicaCount > 1 (%d): set store.redis.existingSecret (or store.redis.url) so that every replica serves every session" $n) -}}
{{- end -}}
{{- if and (gt $n 1) (eq .Values.audit.store "sqlite") -}}
{{- fail (printf "audit.store sqlite keeps one audit chain per process and cannot serve replicaCount > 1 (%d): use audit.store postgres (or off)" $n) -}}
{{- end -}}
{{- if not (has .Values.audit.store (list "sqlite" "postgres" "off")) -}}
{{- fail (printf "audit.store must be sqlite, postgres or off, not %q" .Values.audit.store) -}}
{{- end -}}
{{- if and (eq .Values.audit.store "postgres") (not .Values.audit.postgres.existingSecret) -}}
{{- fail "audit.store postgres needs audit.postgres.existingSecret: a Secret holding the connection string" -}}
{{- end -}}
{{- end -}}
