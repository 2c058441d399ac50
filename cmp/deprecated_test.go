package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/fn/function"
)

// TestPluginDeprecated: every deprecated functionConfig field (function.Deprecations), in each
// form, works through the Argo CD plugin as its new spelling does, the warning on the
// command's stderr (what argocd-cmp-server logs; Argo CD shows stderr only when generation
// fails, and a deprecation must not fail it).
func TestPluginDeprecated(t *testing.T) {
	app, err := os.ReadFile("../testdata/assets/carriers/kubeflow-sparkapplication.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gen := func(t *testing.T, cfg string) (string, string) {
		dir := t.TempDir()
		for name, body := range map[string][]byte{"app.yaml": app, "sparkui.yaml": []byte(cfg)} {
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
		defer cancel()
		manifests, stderr, err := plugin(t).Generate(ctx, dir, testApp(".").Env())
		if err != nil {
			t.Fatalf("generate with %q: %v\n%s", cfg, err, stderr)
		}
		return strings.Join(manifests, "---\n"), stderr
	}
	for _, d := range function.Deprecations {
		for _, pair := range d.Configs() {
			t.Run(strings.SplitN(pair[0], "\n", 3)[1], func(t *testing.T) {
				old, oldErr := gen(t, pair[0])
				cur, curErr := gen(t, pair[1])
				def, _ := gen(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\n")
				if old != cur {
					t.Errorf("%q gives other manifests than %q:\n%s\n---\n%s", pair[0], pair[1], old, cur)
				}
				if cur == def {
					t.Errorf("%q gives the defaults' manifests: the test cannot tell whether the old spelling is read", pair[1])
				}
				if !strings.Contains(oldErr, "[SUI014] deprecated functionConfig field:") || strings.Contains(curErr, "deprecated") {
					t.Errorf("stderr with the old spelling %q, with the new %q; want the deprecation warning with the old only", oldErr, curErr)
				}
			})
		}
	}
}
