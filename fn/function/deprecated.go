package function

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/validate"
)

// Deprecation is a renamed functionConfig field, read with a SUI014 warning for its whole
// deprecation window through every entry point (transform, validate --config, the Helm
// post-renderer, the Argo CD plugin, kpt's ConfigMap form).
type Deprecation struct {
	Old, New         string // typed form, dotted: spec.kubeflow.route
	OldFlat, NewFlat string // ConfigMap form; "" when the field has no flat key
	// Value is one the tests set: not the default, so that reading it shows in the output.
	Value string
}

// Deprecations is the one list of deprecated fields. TestDeprecationsComplete holds it equal
// to the schema's "deprecated" properties, the ConfigMap keys and docs/configuration.md's
// table; TestDeprecatedEveryEntryPoint (fn) and TestPluginDeprecated (cmp) walk it.
var Deprecations = []Deprecation{
	{Old: "spec.kubeflow.route", New: "spec.kubeflow.injection", OldFlat: "kubeflowRoute", NewFlat: "kubeflowInjection", Value: "webhook"},
}

// ConfigRefusals are the results that make a functionConfig unusable: SUI014 errors. A
// deprecation is a SUI014 warning and the configuration it comes with is used, as the
// function itself does (HasError); every entry point that judges a configuration asks here.
func ConfigRefusals(results framework.Results) []*framework.Result {
	var out []*framework.Result
	for _, r := range results {
		if r.Severity == framework.Error && r.Tags["rule"] == validate.SUI014.ID {
			out = append(out, r)
		}
	}
	return out
}

// Configs are functionConfigs that set the deprecated field to Value and, beside each, the
// same with the new spelling: the typed form, and the ConfigMap form when there is a flat key.
func (d Deprecation) Configs() [][2]string {
	out := [][2]string{{typedConfig(d.Old, d.Value), typedConfig(d.New, d.Value)}}
	if d.OldFlat != "" {
		out = append(out, [2]string{flatConfig(d.OldFlat, d.Value), flatConfig(d.NewFlat, d.Value)})
	}
	return out
}

// typedConfig is a SparkUIService setting the dotted field to value.
func typedConfig(field, value string) string {
	parts := strings.Split(field, ".")
	var b strings.Builder
	b.WriteString("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata: {name: sparkui}\n")
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			b.WriteString(" " + value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// flatConfig is the ConfigMap form (what `kpt fn eval -- key=value` gives) setting key.
func flatConfig(key, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\ndata:\n  " + key + ": " + value + "\n"
}
