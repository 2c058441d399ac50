package function

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestKubeflowRoute: both forms select the route; the default is template; a bad value is a
// SUI014 result naming the field as the user wrote it.
func TestKubeflowRoute(t *testing.T) {
	for _, tc := range []struct{ fc, route, errField string }{
		{"", "template", ""},
		{"apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nspec:\n  kubeflow:\n    route: webhook\n", "webhook", ""},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  kubeflowRoute: webhook\n", "webhook", ""},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  kubeflowRoute: template\n", "template", ""},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  kubeflowRoute: hook\n", "", "data.kubeflowRoute"},
		{"apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nspec:\n  kubeflow:\n    route: Template\n", "", "spec.kubeflow.route"},
	} {
		var fc *yaml.RNode
		if tc.fc != "" {
			fc = yaml.MustParse(tc.fc)
		}
		cfg, res := LoadConfig(fc)
		if tc.errField != "" {
			if len(res) != 1 || res[0].Field == nil || res[0].Field.Path != tc.errField || res[0].Tags["rule"] != "SUI014" {
				t.Errorf("%q: results %v, want one SUI014 at %s", tc.fc, res, tc.errField)
			}
			continue
		}
		if len(res) > 0 || cfg.KubeflowRoute != tc.route {
			t.Errorf("%q: route %q, results %v; want %q", tc.fc, cfg.KubeflowRoute, res, tc.route)
		}
	}
}
