{{/* gateway.yaml: the config values, then what the chart sets itself. */}}
{{- define "toolwire-gateway.config" -}}
listen: "0.0.0.0:{{ .Values.service.port }}"
admin_listen: "0.0.0.0:{{ .Values.service.adminPort }}"
{{- $svc := include "toolwire-gateway.fullname" . }}
allowed_hosts:
  - {{ $svc | quote }}
  - {{ printf "%s.%s" $svc .Release.Namespace | quote }}
  - {{ printf "%s.%s.svc" $svc .Release.Namespace | quote }}
  - {{ printf "%s.%s.svc.%s" $svc .Release.Namespace .Values.clusterDomain | quote }}
{{- range .Values.allowedHosts }}
  - {{ . | quote }}
{{- end }}
data_dir: /data
log_format: json
{{- with .Values.config.public_url }}
public_url: {{ . | quote }}
{{- end }}
upstreams:
  {{- toYaml (default dict .Values.config.upstreams) | nindent 2 }}
{{- range $k := list "naming" "personas" "rate_limits" "enrichment" }}
{{- with (get $.Values.config $k) }}
{{ $k }}:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- if or .Values.auth.apiKeys .Values.auth.oauth }}
auth:
  {{- with .Values.auth.apiKeys }}
  api_keys:
    {{- range $name, $v := . }}
    {{- if kindIs "string" $v }}
    {{ $name }}: {{ $v | quote }}
    {{- else }}
    {{ $name }}: "${ {{- include "toolwire-gateway.apiKeyEnv" $name -}} }"
    {{- end }}
    {{- end }}
  {{- end }}
  {{- with .Values.auth.oauth }}
  oauth:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- if .Values.admin.existingSecret }}
admin:
  key_hash: "${TOOLWIRE_ADMIN_KEY_HASH}"
{{- end }}
{{- if include "toolwire-gateway.redis" . }}
store:
  redis:
    url: "${REDIS_URL}"
    prefix: {{ .Values.store.redis.prefix | quote }}
{{- end }}
audit:
  store: {{ .Values.audit.store }}
  {{- if eq .Values.audit.store "postgres" }}
  postgres: "${DATABASE_URL}"
  {{- end }}
  {{- if and .Values.audit.keySecret (ne .Values.audit.store "off") }}
  key_file: /etc/toolwire/audit/{{ .Values.audit.keySecretKey }}
  {{- end }}
  {{- with .Values.audit.retention }}
  retention: {{ . | quote }}
  {{- end }}
{{- end -}}
