package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestCarrierOutputValidatesClean: for every carrier fixture, validate mode on the function's
// own output reports exactly what transform mode reported, and no error: the output passes
// the rules it was rewritten to pass.
func TestCarrierOutputValidatesClean(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/carrier-*/input.yaml")
	if len(dirs) < 10 {
		t.Fatalf("only %d carrier fixtures", len(dirs))
	}
	for _, in := range dirs {
		t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			route := "template"
			if strings.Contains(string(src), "kubeflowInjection: webhook") {
				route = "webhook"
			}
			out, err := yaml.Parse(string(runProcessor(t, src)))
			if err != nil {
				t.Fatal(err)
			}
			transformResults := out.Field("results")
			if err := out.PipeE(yaml.Clear("results")); err != nil {
				t.Fatal(err)
			}
			out.SetMapField(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {mode: validate, kubeflowInjection: "+route+"}"), "functionConfig")
			v, err := yaml.Parse(string(runProcessor(t, []byte(out.MustString()))))
			if err != nil {
				t.Fatal(err)
			}
			validateResults := v.Field("results")
			str := func(f *yaml.MapNode) string {
				if f == nil {
					return ""
				}
				return f.Value.MustString()
			}
			if d := cmp.Diff(str(transformResults), str(validateResults)); d != "" {
				t.Errorf("validate mode on the output differs from transform mode's results (-transform +validate):\n%s", d)
			}
			if strings.Contains(str(validateResults), "severity: error") {
				t.Errorf("validate mode finds errors in the function's own output:\n%s", str(validateResults))
			}
		})
	}
}
