package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// readRL reads a golden file as a ResourceList.
func readRL(t *testing.T, path string) *framework.ResourceList {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(b), KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
}

// itemsYAML writes items as one stream; kio.ByteWriter leaves kyaml's reader annotations out.
func itemsYAML(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(items); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// withConfig is fc (nil: the defaults) with field set to value, in fc's own form.
func withConfig(t *testing.T, fc *yaml.RNode, typed []string, flat, value string) *yaml.RNode {
	t.Helper()
	if fc == nil {
		fc = yaml.MustParse("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: sparkui\n")
	}
	fc = fc.Copy()
	path, key := typed[:len(typed)-1], typed[len(typed)-1]
	v := yaml.NewScalarRNode(value)
	if value == "false" {
		v.YNode().Tag = yaml.NodeTagBool
	}
	if fc.GetKind() == "ConfigMap" {
		path, key, v = []string{"data"}, flat, yaml.NewStringRNode(value)
	}
	if err := fc.PipeE(yaml.LookupCreate(yaml.MappingNode, path...), yaml.SetField(key, v)); err != nil {
		t.Fatal(err)
	}
	return fc
}

func process(t *testing.T, items []*yaml.RNode, fc *yaml.RNode) []*yaml.RNode {
	t.Helper()
	rl := &framework.ResourceList{Items: items, FunctionConfig: fc}
	if err := function.Process(rl); err != nil {
		t.Fatal(err)
	}
	return rl.Items
}

func uninstall(t *testing.T, items []*yaml.RNode, fc *yaml.RNode) []*yaml.RNode {
	return process(t, items, withConfig(t, fc, []string{"spec", "mode"}, "mode", "uninstall"))
}

// TestUninstallGoldens: on every golden case, uninstalling transform's output (expected.yaml,
// run with the case's own functionConfig switched to mode uninstall) gives back the input's
// objects byte for byte, comments included, with the exceptions docs/uninstall.md lists:
//   - zero ports stay repaired: the baseline is the input as transform with
//     service.enabled: false writes it (only zero ports fixed), then uninstalled;
//   - an input that already held sparkui's output (a re-run, an upgrade, a switch) comes back
//     without it: the baseline is uninstalled too, which leaves an input sparkui never
//     touched as it is (asserted below);
//   - an object written with YAML anchors and aliases that transform edited stays expanded
//     (the reader's view is the same: yamlx/dealias.go): such objects are compared expanded.
func TestUninstallGoldens(t *testing.T) {
	cases := fixtures(t)
	touched := 0
	for _, in := range cases {
		dir := filepath.Dir(in)
		name := filepath.Base(dir)
		input := readRL(t, in)
		fc := input.FunctionConfig
		raw, _ := os.ReadFile(in)
		repaired := process(t, copyItems(t, input.Items), withConfig(t, fc, []string{"spec", "service", "enabled"}, "serviceEnabled", "false"))
		want := uninstall(t, repaired, fc)
		exp := readRL(t, filepath.Join(dir, "expected.yaml"))
		got := uninstall(t, exp.Items, fc)
		if d := cmp.Diff(itemsYAML(t, want), itemsYAML(t, got)); d != "" && !onlyExpected(d, uninstallExceptions[name]) {
			if !bytes.Contains(raw, []byte("&")) || cmp.Diff(itemsYAML(t, yamlx.Unalias(want).Items), itemsYAML(t, yamlx.Unalias(got).Items)) != "" {
				t.Errorf("%s: uninstall of the output is not the input (-input +uninstalled):\n%s", name, d)
			}
		}
		// Idempotent: uninstalling again changes nothing.
		if d := cmp.Diff(itemsYAML(t, got), itemsYAML(t, uninstall(t, copyItems(t, got), fc))); d != "" {
			t.Errorf("%s: a second uninstall changed the output:\n%s", name, d)
		}
		// An input sparkui never wrote into is left as it is.
		if bytes.Contains(raw, []byte("sparkui-runtime")) || bytes.Contains(raw, []byte("managed-by: sparkui")) {
			touched++
			continue
		}
		if d := cmp.Diff(itemsYAML(t, input.Items), itemsYAML(t, uninstall(t, copyItems(t, input.Items), fc))); d != "" {
			t.Errorf("%s: uninstall changed an input sparkui never touched:\n%s", name, d)
		}
	}
	if touched == 0 || touched == len(cases) {
		t.Errorf("%d of %d inputs hold sparkui output: the walk does not test what it says", touched, len(cases))
	}
}

// uninstallExceptions are the lines that may differ, per case, and why (docs/uninstall.md):
// "+" a line uninstall leaves, "-" one it cannot give back.
var uninstallExceptions = map[string][]string{
	// A Pod Spark did not make (client mode, a Connect server) gets spark-app-selector where
	// it has none (InjectionPlan); nothing tells it from Spark's own label, so it stays.
	"client-mode":         {"+ spark-app-selector: jupyter-notebook-for-the-data-science-team-quarterly-f-8dccc04f"},
	"runtime-auth-header": {"+ spark-app-selector: notebook-0"},
	"connect-server":      {"+ spark-app-selector: spark-connect-0"},
	"route-grpc":          {"+ spark-app-selector: spark-connect-0"},
	// A user's proxyBase contradicting the route was replaced, with a SUI044 warning.
	"route-update-in-place": {"- spark.ui.proxyBase: /old"},
}

// onlyExpected reports whether every changed line of the diff d is one of lines.
func onlyExpected(d string, lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	for _, l := range strings.Split(d, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "-") {
			continue
		}
		norm := l[:1] + " " + strings.Join(strings.Fields(l[1:]), " ")
		if !slices.Contains(lines, norm) {
			return false
		}
	}
	return true
}

// copyItems reads items again from their YAML (RNode.Copy does not keep an alias pointing at
// its own copy of the anchor).
func copyItems(t *testing.T, items []*yaml.RNode) []*yaml.RNode {
	t.Helper()
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b}).Write(items); err != nil {
		t.Fatal(err)
	}
	out, err := (&kio.ByteReader{Reader: &b, PreserveSeqIndent: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
