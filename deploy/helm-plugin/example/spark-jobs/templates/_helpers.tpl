{{- define "spark-jobs.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "spark-jobs.serviceAccountName" -}}
{{- default (printf "%s-spark" .Release.Name) .Values.serviceAccount.name }}
{{- end }}

{{/* The spec shared by a SparkApplication and a ScheduledSparkApplication's template.
     Called with (dict "root" $ "name" $name "app" $app). */}}
{{- define "spark-jobs.appSpec" -}}
{{- $v := .root.Values -}}
type: {{ .app.type }}
{{- with .app.pythonVersion }}
pythonVersion: {{ . | quote }}
{{- end }}
mode: cluster
image: {{ default $v.image .app.image }}
imagePullPolicy: {{ $v.imagePullPolicy }}
{{- with .app.mainClass }}
mainClass: {{ . }}
{{- end }}
mainApplicationFile: {{ .app.mainApplicationFile }}
{{- with .app.arguments }}
arguments:
{{- range . }}
- {{ . | quote }}
{{- end }}
{{- end }}
sparkVersion: {{ $v.sparkVersion }}
{{- with .app.sparkConf }}
sparkConf:
{{- toYaml . | nindent 2 }}
{{- end }}
restartPolicy:
  type: Never
driver:
  cores: {{ $v.driver.cores }}
  memory: {{ $v.driver.memory }}
  serviceAccount: {{ include "spark-jobs.serviceAccountName" .root }}
  labels:
    app.kubernetes.io/instance: {{ .root.Release.Name }}
executor:
  cores: {{ $v.executor.cores }}
  instances: {{ .app.instances }}
  memory: {{ $v.executor.memory }}
{{- end }}
