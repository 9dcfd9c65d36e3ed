{{/* Names, labels, image and value checks shared by every template of the gryvia chart. */}}

{{/* The chart name, or nameOverride. */}}
{{- define "gryvia.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object name: fullnameOverride, else the release name (plus the chart
name unless the release name already contains it). Truncated so that suffixes still fit 63. */}}
{{- define "gryvia.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* `helm.sh/chart`: chart name and version. */}}
{{- define "gryvia.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels. Call with (dict "ctx" $ "component" "operator"); component is optional. */}}
{{- define "gryvia.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gryvia.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{/* Standard labels of every object. Call with (dict "ctx" $ "component" "webhook"). */}}
{{- define "gryvia.labels" -}}
helm.sh/chart: {{ include "gryvia.chart" .ctx }}
{{ include "gryvia.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: gryvia
{{- end -}}

{{/* The operator's ServiceAccount name. */}}
{{- define "gryvia.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-operator" (include "gryvia.fullname" .)) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The operator image: repository@digest, or repository:tag (tag defaults to appVersion). */}}
{{- define "gryvia.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Names of the webhook's Service, TLS Secret and cert-manager Certificate. */}}
{{- define "gryvia.webhook.serviceName" -}}
{{- printf "%s-webhook" (include "gryvia.fullname" .) -}}
{{- end -}}

{{- define "gryvia.webhook.tlsSecretName" -}}
{{- printf "%s-webhook-tls" (include "gryvia.fullname" .) -}}
{{- end -}}

{{- define "gryvia.webhook.certificateName" -}}
{{- printf "%s-webhook" (include "gryvia.fullname" .) -}}
{{- end -}}

{{/* True ("true") when the chart renders the webhook configuration and its certificate, i.e.
the webhook is on and the operator does not register it itself. */}}
{{- define "gryvia.webhook.chartManaged" -}}
{{- if and .Values.webhook.enabled (not .Values.webhook.selfRegister) -}}true{{- end -}}
{{- end -}}

{{/* The fixed names of the tenant ClusterRoles; the operator binds them by name. */}}
{{- define "gryvia.tenantRoleNames" -}}
{{- list "gryvia-tenant-viewer" "gryvia-tenant-member" "gryvia-tenant-admin" | toJson -}}
{{- end -}}

{{/* "true" when a switch value is on: a boolean, or an object with `enabled` (the FAQ writes
`gpuOperator.gpuSharing=true`; earlier releases `gpuOperator.gpuSharing.enabled=true`). */}}
{{- define "gryvia.on" -}}
{{- if kindIs "map" . -}}{{ if .enabled }}true{{ end }}{{- else if . -}}true{{- end -}}
{{- end -}}

{{/* Fail fast on combinations the schema cannot express. Included once, by the Deployment. */}}
{{- define "gryvia.validateValues" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true: without an elected leader every replica would handle every object" -}}
{{- end -}}
{{- if and .Values.leaderElection.enabled .Values.peering.enabled -}}
{{- fail "leaderElection.enabled and peering.enabled exclude each other: kopf peering would pause the standby; set peering.enabled=false (or leaderElection.enabled=false for a single replica)" -}}
{{- end -}}
{{- with .Values.leaderElection -}}
{{- if and .enabled (not (and (lt (float64 .retryPeriod) (float64 .renewDeadline)) (lt (float64 .renewDeadline) (float64 .leaseDuration)))) -}}
{{- fail "leaderElection needs retryPeriod < renewDeadline < leaseDuration: a leader must stop before a standby may take the Lease" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.webhook.selfRegister (not .Values.webhook.enabled) -}}
{{- fail "webhook.selfRegister=true needs webhook.enabled=true" -}}
{{- end -}}
{{- if and (include "gryvia.webhook.chartManaged" .) (eq .Values.tls.mode "certManager") (not (.Capabilities.APIVersions.Has "cert-manager.io/v1")) -}}
{{- fail "tls.mode=certManager needs cert-manager (API cert-manager.io/v1) in the cluster; install it first, or use tls.mode=selfSigned (with `helm template`, pass --api-versions cert-manager.io/v1)" -}}
{{- end -}}
{{- end -}}
