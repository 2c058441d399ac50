package function

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	typedKubeflow = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nspec:\n  kubeflow:\n"
	cmKubeflow    = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\ndata:\n"
)

// TestKubeflowInjection: both forms select where sparkui writes into a kubeflow
// SparkApplication; the default is template; a bad value is a SUI014 error naming the field
// as the user wrote it, and nothing else is said.
func TestKubeflowInjection(t *testing.T) {
	for _, tc := range []struct{ fc, injection, errField string }{
		{"", "template", ""},
		{typedKubeflow + "    injection: webhook\n", "webhook", ""},
		{typedKubeflow + "    injection: template\n", "template", ""},
		{cmKubeflow + "  kubeflowInjection: webhook\n", "webhook", ""},
		{cmKubeflow + "  kubeflowInjection: template\n", "template", ""},
		{cmKubeflow + "  kubeflowInjection: hook\n", "", "data.kubeflowInjection"},
		{typedKubeflow + "    injection: Template\n", "", "spec.kubeflow.injection"},
		// The deprecated spelling's values are checked as strictly.
		{cmKubeflow + "  kubeflowRoute: hook\n", "", "data.kubeflowRoute"},
		{typedKubeflow + "    route: Webhook\n", "", "spec.kubeflow.route"},
	} {
		var fc *yaml.RNode
		if tc.fc != "" {
			fc = yaml.MustParse(tc.fc)
		}
		cfg, res := LoadConfig(fc)
		if tc.errField != "" {
			if len(res) != 1 || res[0].Field == nil || res[0].Field.Path != tc.errField || res[0].Tags["rule"] != "SUI014" || res[0].Severity != framework.Error {
				t.Errorf("%q: results %v, want one SUI014 error at %s", tc.fc, res, tc.errField)
			}
			continue
		}
		if len(res) > 0 || cfg.KubeflowInjection != tc.injection {
			t.Errorf("%q: injection %q, results %v; want %q and no result", tc.fc, cfg.KubeflowInjection, res, tc.injection)
		}
	}
}

// TestKubeflowRouteDeprecated: the old spelling (spec.kubeflow.route, ConfigMap key
// kubeflowRoute) is still read, with one SUI014 warning at the old field whose message names
// the new one; the same value under both names is the same warning; different values are one
// SUI014 error naming both fields.
func TestKubeflowRouteDeprecated(t *testing.T) {
	for _, tc := range []struct {
		fc, injection string
		sev           framework.Severity
		field, msg    string
	}{
		{typedKubeflow + "    route: webhook\n", "webhook", framework.Warning, "spec.kubeflow.route",
			"[SUI014] deprecated functionConfig field: spec.kubeflow.route: renamed spec.kubeflow.injection (same values: template, webhook); the old name is read, with this warning, for one more minor version"},
		{cmKubeflow + "  kubeflowRoute: webhook\n", "webhook", framework.Warning, "data.kubeflowRoute",
			"[SUI014] deprecated functionConfig field: data.kubeflowRoute: renamed data.kubeflowInjection (same values: template, webhook); the old name is read, with this warning, for one more minor version"},
		{cmKubeflow + "  kubeflowRoute: template\n", "template", framework.Warning, "data.kubeflowRoute", "renamed data.kubeflowInjection"},
		{typedKubeflow + "    route: webhook\n    injection: webhook\n", "webhook", framework.Warning, "spec.kubeflow.route",
			"[SUI014] deprecated functionConfig field: spec.kubeflow.route: renamed spec.kubeflow.injection, which is also set to the same value: remove spec.kubeflow.route"},
		{typedKubeflow + "    route: webhook\n    injection: template\n", "", framework.Error, "spec.kubeflow.route, spec.kubeflow.injection",
			`[SUI014] invalid functionConfig: spec.kubeflow.route, spec.kubeflow.injection: spec.kubeflow.route is the deprecated spelling of spec.kubeflow.injection and they disagree ("webhook", "template"): keep spec.kubeflow.injection alone`},
		{cmKubeflow + "  kubeflowRoute: template\n  kubeflowInjection: webhook\n", "", framework.Error, "data.kubeflowRoute, data.kubeflowInjection",
			`[SUI014] invalid functionConfig: data.kubeflowRoute, data.kubeflowInjection: data.kubeflowRoute is the deprecated spelling of data.kubeflowInjection and they disagree ("template", "webhook"): keep data.kubeflowInjection alone`},
	} {
		cfg, res := LoadConfig(yaml.MustParse(tc.fc))
		if len(res) != 1 || res[0].Field == nil {
			t.Errorf("%q: results %v, want one", tc.fc, res)
			continue
		}
		r := res[0]
		if r.Tags["rule"] != "SUI014" || r.Severity != tc.sev || r.Field.Path != tc.field || !strings.Contains(r.Message, tc.msg) {
			t.Errorf("%q: got %s %s at %s: %q\nwant SUI014 %s at %s: %q", tc.fc, r.Tags["rule"], r.Severity, r.Field.Path, r.Message, tc.sev, tc.field, tc.msg)
		}
		if HasError(res) != (tc.sev == framework.Error) {
			t.Errorf("%q: HasError = %v", tc.fc, HasError(res))
		}
		if tc.injection != "" && cfg.KubeflowInjection != tc.injection {
			t.Errorf("%q: injection %q, want %q", tc.fc, cfg.KubeflowInjection, tc.injection)
		}
	}
}

// TestKubeflowRouteDeprecatedOutput: through the whole function, the old spelling writes
// exactly the items the new one writes, and its results are the new one's plus the
// deprecation warning; with both spellings disagreeing the items come back unchanged with
// the error alone.
func TestKubeflowRouteDeprecatedOutput(t *testing.T) {
	in := readItems(t, "../../testdata/carrier-kubeflow-webhook/input.yaml")
	run := func(fc string) ([]*yaml.RNode, framework.Results) {
		rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(fc)}
		for _, it := range in {
			rl.Items = append(rl.Items, it.Copy())
		}
		if err := Process(rl); err != nil {
			t.Fatal(err)
		}
		return rl.Items, rl.Results
	}
	newItems, newRes := run(cmKubeflow + "  kubeflowInjection: webhook\n")
	oldItems, oldRes := run(cmKubeflow + "  kubeflowRoute: webhook\n")
	templItems, _ := run(cmKubeflow + "  kubeflowInjection: template\n")
	if itemsString(t, newItems) == itemsString(t, templItems) {
		t.Fatal("webhook and template injections write the same items: the test proves nothing")
	}
	if d := cmp.Diff(itemsString(t, newItems), itemsString(t, oldItems)); d != "" {
		t.Errorf("old spelling writes other items (-new +old):\n%s", d)
	}
	messages := func(rs framework.Results) []string {
		var out []string
		for _, r := range rs {
			out = append(out, string(r.Severity)+" "+r.Message)
		}
		return out
	}
	if HasError(newRes) {
		t.Fatalf("new spelling: %v", messages(newRes))
	}
	want := append([]string{"warning [SUI014] deprecated functionConfig field: data.kubeflowRoute: renamed data.kubeflowInjection (same values: template, webhook); the old name is read, with this warning, for one more minor version"}, messages(newRes)...)
	if d := cmp.Diff(want, messages(oldRes)); d != "" {
		t.Errorf("old spelling's results (-want +got):\n%s", d)
	}

	bothItems, bothRes := run(cmKubeflow + "  kubeflowRoute: webhook\n  kubeflowInjection: template\n")
	if d := cmp.Diff(itemsString(t, in), itemsString(t, bothItems)); d != "" {
		t.Errorf("disagreeing spellings changed the items (-in +out):\n%s", d)
	}
	if m := messages(bothRes); len(m) != 1 || !strings.HasPrefix(m[0], "error [SUI014] invalid functionConfig: data.kubeflowRoute, data.kubeflowInjection:") {
		t.Errorf("disagreeing spellings: results %q, want the one SUI014 error naming both keys", m)
	}
}
