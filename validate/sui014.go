package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SUI014: invalid functionConfig.
var SUI014 = Rule{
	ID:       "SUI014",
	Severity: framework.Error,
	Title:    "invalid functionConfig",
	Name:     "FunctionConfig",
	Catches: "An unknown field or key, or a bad value, in the functionConfig (typed SparkUIService or ConfigMap). " +
		"A deprecated field still read (spec.kubeflow.route, ConfigMap key kubeflowRoute: now spec.kubeflow.injection, kubeflowInjection) is a SUI014 warning naming the new field; " +
		"the old and the new spelling with different values are an error naming both.",
	Why:      "The function cannot know what was meant, so it changes nothing rather than guess: a typo such as serviceTyp would otherwise fall back to the default silently.",
	Fix:      "Correct the named field (see docs/configuration.md); for a warning, rename the deprecated field as the message says.",
	RaisedBy: "fn/function/config.go",
	Fixtures: "[`testdata/bad-config`](../testdata/bad-config/input.yaml), [`testdata/bad-configmap-config`](../testdata/bad-configmap-config/input.yaml) " +
		"and, for the deprecation warning, [`testdata/config-kubeflow-route-deprecated`](../testdata/config-kubeflow-route-deprecated/input.yaml) (the golden tests).",
	Failing: `apiVersion: sparkui.dev/v1alpha1
kind: SparkUIService
spec:
  service:
    type: ExternalName   # SUI014 spec.service.type (in the ConfigMap form: data.serviceType)
`,
	Passing: `  service:
    type: NodePort
`,
}

// ConfigError is SUI014: the functionConfig is invalid at field. Nothing is changed when the
// configuration cannot be trusted.
func ConfigError(fc *yaml.RNode, field, msg string) *framework.Result {
	return NewResult(SUI014.ID, SUI014.Severity, fc, field, "invalid functionConfig: "+field+": "+msg)
}

// ConfigDeprecated is SUI014 at warning severity: field is a deprecated spelling of another,
// still read (its value is used), named in msg.
func ConfigDeprecated(fc *yaml.RNode, field, msg string) *framework.Result {
	return NewResult(SUI014.ID, framework.Warning, fc, field, "deprecated functionConfig field: "+field+": "+msg)
}
