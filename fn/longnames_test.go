package main

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// TestLongCarrierNamesValidLabels: for carriers named with more than 63 characters, every
// label the function writes is one the API server accepts (its own validation helpers), and
// the runtime's --guard-label and --selector name the driver Pod's identity label exactly.
func TestLongCarrierNamesValidLabels(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(nil, bytes.NewReader(readFixture(t, "long-carrier-names")), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	objs := objectsByName(t, stdout.Bytes())
	checked := 0
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		yamlx.Pairs(n, func(k, v *yaml.Node) {
			p := path + "." + k.Value
			if k.Value == "labels" || k.Value == "matchLabels" {
				yamlx.Pairs(v, func(lk, lv *yaml.Node) {
					checked++
					if errs := validation.IsQualifiedName(lk.Value); len(errs) > 0 {
						t.Errorf("%s: label key %q: %v", p, lk.Value, errs)
					}
					if errs := validation.IsValidLabelValue(lv.Value); len(errs) > 0 {
						t.Errorf("%s: label %s=%q: %v", p, lk.Value, lv.Value, errs)
					}
				})
			}
			walk(v, p)
		})
		for _, e := range yamlx.Items(n) {
			walk(e, path+"[]")
		}
	}
	for name, o := range objs {
		walk(o.YNode(), name)
	}
	if checked < 10 {
		t.Errorf("only %d labels checked", checked)
	}
	for _, c := range []struct{ obj, labels string }{
		{"SparkApplication/quarterly-revenue-quarterly-revenue-quarterly-revenue-quarterly-revenue-quarterly-revenue-reconciliation", "spec.driver.template.metadata.labels"},
		{"Deployment/spark-connect-server-for-the-analytics-platform-team-in-region-eu-west", "spec.template.metadata.labels"},
	} {
		o := objs[c.obj]
		if o == nil {
			t.Fatalf("no %s", c.obj)
		}
		id := yamlx.GetStr(o.YNode(), append(strings.Split(c.labels, "."), "sparkui.dev/application")...)
		if id == "" || len(id) > 63 {
			t.Errorf("%s: identity label %q", c.obj, id)
		}
		var guard, selector string
		tmpl := strings.TrimSuffix(c.labels, ".metadata.labels")
		for _, a := range yamlx.Items(yamlx.Get(yamlx.Items(yamlx.Get(o.YNode(), append(strings.Split(tmpl, "."), "spec", "initContainers")...))[0], "args")) {
			if v, ok := strings.CutPrefix(a.Value, "--guard-label="); ok {
				guard = v
			}
			if v, ok := strings.CutPrefix(a.Value, "--selector="); ok {
				selector = v
			}
		}
		if guard != "sparkui.dev/application="+id || !strings.Contains(selector, ","+guard+",") {
			t.Errorf("%s: --guard-label=%s --selector=%s, want the identity label sparkui.dev/application=%s", c.obj, guard, selector, id)
		}
		// An older sparkui labelled everything with the whole name: its output is taken over
		// (the same objects, relabelled), not doubled.
		_, name, _ := strings.Cut(c.obj, "/")
		older := bytes.ReplaceAll(stdout.Bytes(), []byte(id), []byte(name))
		var again bytes.Buffer
		if code := run(nil, bytes.NewReader(older), &again, &stderr); code != 0 || again.String() != stdout.String() {
			t.Errorf("%s: on an older output: exit %d, output differs from the first run's:\n%s", c.obj, code, again.String())
		}
	}
}
