{{/* The chart's name, at most 63 characters (a label value's limit). */}}
{{- define "syslint-agent.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The DaemonSet's name: the release's, with the chart's name unless it holds it already. */}}
{{- define "syslint-agent.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "syslint-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "syslint-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "syslint-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "syslint-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* metricsListen's port ("0.0.0.0:9464", "[::]:9464": 9464), or "" without metricsListen. */}}
{{- define "syslint-agent.metricsPort" -}}
{{- with .Values.metricsListen }}
{{- $port := regexFind "[0-9]+$" (toString .) }}
{{- if not (regexMatch ":[0-9]+$" (toString .)) }}
{{- fail (printf "metricsListen %q: an address with a port, e.g. 0.0.0.0:9464" (toString .)) }}
{{- end }}
{{- $port }}
{{- end }}
{{- end }}

{{/* The agent's arguments: a flag for each value set, in the order of the DaemonSet's. */}}
{{- define "syslint-agent.args" -}}
{{- $v := .Values }}
{{- $args := list "agent" }}
{{- with $v.metricsListen }}{{ $args = concat $args (list "--metrics-listen" (toString .)) }}{{ end }}
{{- with $v.window }}{{ $args = concat $args (list "--window" (toString .)) }}{{ end }}
{{- with $v.every }}{{ $args = concat $args (list "--every" (toString .)) }}{{ end }}
{{- with $v.otlpEndpoint }}{{ $args = concat $args (list "--otlp-endpoint" (toString .)) }}{{ end }}
{{- with $v.otlpTls }}
{{- if and .clientCertificate (not .secretName) }}
{{- fail "otlpTls.clientCertificate: the certificate and key come from otlpTls.secretName; set it" }}
{{- end }}
{{- if and .secretName (not (hasPrefix "https://" (toString $v.otlpEndpoint))) }}
{{- fail "otlpTls.secretName: TLS files are for an https:// otlpEndpoint" }}
{{- end }}
{{- with .secretName }}{{ $args = concat $args (list "--otlp-ca" "/etc/syslint/otlp-tls/ca.crt") }}{{ end }}
{{- if .clientCertificate }}
{{- $args = concat $args (list "--otlp-client-cert" "/etc/syslint/otlp-tls/tls.crt" "--otlp-client-key" "/etc/syslint/otlp-tls/tls.key") }}
{{- end }}
{{- end }}
{{- range $v.comm }}{{ $args = concat $args (list "--comm" (toString .)) }}{{ end }}
{{- range $v.cgroup }}{{ $args = concat $args (list "--cgroup" (toString .)) }}{{ end }}
{{- with $v.stacks }}
{{- if not (has (toString .) (list "sampled" "off")) }}
{{- fail (printf "stacks %q: sampled or off" (toString .)) }}
{{- end }}
{{- $args = concat $args (list "--stacks" (toString .)) }}
{{- end }}
{{- if $v.countBetween }}{{ $args = append $args "--count-between" }}{{ end }}
{{- with $v.podLogs }}{{ $args = concat $args (list "--pod-logs" (toString .)) }}{{ end }}
{{- with $v.cpuBudget }}{{ $args = concat $args (list "--cpu-budget" (toString .)) }}{{ end }}
{{- with $v.memoryBudget }}{{ $args = concat $args (list "--memory-budget" (toString .)) }}{{ end }}
{{- if ne (toString $v.windowRecords) "" }}{{ $args = concat $args (list "--window-records" (toString $v.windowRecords)) }}{{ end }}
{{- range $v.extraArgs }}{{ $args = append $args (toString .) }}{{ end }}
{{- toJson $args }}
{{- end }}
