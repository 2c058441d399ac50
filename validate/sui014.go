package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigError is SUI014: the functionConfig is invalid at field. Nothing is changed when the
// configuration cannot be trusted.
func ConfigError(fc *yaml.RNode, field, msg string) *framework.Result {
	return NewResult("SUI014", framework.Error, fc, field, "invalid functionConfig: "+field+": "+msg)
}
