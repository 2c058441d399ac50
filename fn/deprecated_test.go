package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// TestDeprecatedEveryEntryPoint walks every deprecated functionConfig field (function.Deprecations),
// in each form it has (typed; ConfigMap, which is also kpt's `fn eval -- key=value`), through
// every entry point of sparkui-fn that takes a configuration: the ResourceList (kustomize, kpt),
// standalone files, the Helm post-renderer and `validate --config`. Each must give exactly
// what the new spelling gives, and show the deprecation warning where that entry point shows
// warnings (a result in the ResourceList; stderr; validate's report). `sparkui-fn policy` takes
// no configuration (its policies judge one object against the rules alone); the Argo CD plugin
// is cmp's TestPluginDeprecated.
func TestDeprecatedEveryEntryPoint(t *testing.T) {
	app, err := os.ReadFile("../testdata/assets/carriers/kubeflow-sparkapplication.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		code           int
		stdout, stderr string
	}
	entryPoints := []struct {
		name string
		run  func(t *testing.T, cfg, newCfg string) got
	}{
		{"ResourceList", func(t *testing.T, cfg, newCfg string) got {
			in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(cfg) + "items:\n" + indent("- "+strings.ReplaceAll(string(app), "\n", "\n  "))
			var out, errb bytes.Buffer
			code := run(nil, strings.NewReader(in), &out, &errb)
			return got{code, out.String(), errb.String()}
		}},
		{"standalone", func(t *testing.T, cfg, newCfg string) got {
			var out, errb bytes.Buffer
			code := run([]string{writeConfig(t, cfg), "../testdata/assets/carriers/kubeflow-sparkapplication.yaml"}, strings.NewReader(""), &out, &errb)
			return got{code, out.String(), errb.String()}
		}},
		{"helm-postrenderer", func(t *testing.T, cfg, newCfg string) got {
			var out, errb bytes.Buffer
			code := run([]string{"helm-postrenderer", writeConfig(t, cfg)}, bytes.NewReader(app), &out, &errb)
			return got{code, out.String(), errb.String()}
		}},
		{"validate --config", func(t *testing.T, cfg, newCfg string) got {
			// validate judges manifests already transformed with the new spelling.
			var tr, errb bytes.Buffer
			if code := run([]string{writeConfig(t, newCfg), "../testdata/assets/carriers/kubeflow-sparkapplication.yaml"}, strings.NewReader(""), &tr, &errb); code != 0 {
				t.Fatalf("transform with %q: exit %d\n%s", newCfg, code, errb.String())
			}
			manifests := filepath.Join(t.TempDir(), "manifests.yaml")
			if err := os.WriteFile(manifests, tr.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			errb.Reset()
			code := run([]string{"validate", "--config", writeConfig(t, cfg), manifests}, nil, &out, &errb)
			return got{code, out.String(), errb.String()}
		}},
	}
	for _, d := range function.Deprecations {
		for _, pair := range d.Configs() {
			for _, ep := range entryPoints {
				t.Run(ep.name+"/"+firstKey(pair[0], d), func(t *testing.T) {
					old, cur, def := ep.run(t, pair[0], pair[1]), ep.run(t, pair[1], pair[1]), ep.run(t, defaults, pair[1])
					field := d.Old
					if strings.Contains(pair[0], "kind: ConfigMap") {
						field = "data." + d.OldFlat
					}
					warning := "[SUI014] deprecated functionConfig field: " + field + ": renamed"
					if old.code != 0 || cur.code != 0 {
						t.Fatalf("exit %d with %s, %d with %s; want 0\n%s\n%s", old.code, field, cur.code, d.New, old.stderr, cur.stderr)
					}
					shown := old.stderr
					if ep.name == "ResourceList" || ep.name == "validate --config" {
						shown = old.stdout // a result of the ResourceList; a finding of the report
					}
					if !strings.Contains(shown, warning) || strings.Contains(cur.stdout+cur.stderr, "deprecated") {
						t.Errorf("the warning %q: shown %q with the old spelling; the new one said %q", warning, shown, cur.stdout+cur.stderr)
					}
					if ep.name == "validate --config" {
						if strings.Count(old.stdout, "\n") != strings.Count(cur.stdout, "\n")+1 {
							t.Errorf("validate with %s:\n%s\nwith %s:\n%s", field, old.stdout, d.New, cur.stdout)
						}
						return
					}
					if a, b := items(t, old.stdout), items(t, cur.stdout); a != b {
						t.Errorf("%s gives other objects than %s:\n%s\n---\n%s", field, d.New, a, b)
					}
					if items(t, def.stdout) == items(t, cur.stdout) {
						t.Errorf("%s=%s gives what the default gives: the test cannot tell whether it is read", d.New, d.Value)
					}
				})
			}
		}
	}
}

// defaults is a configuration with every default (an empty ConfigMap).
const defaults = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\n"

func firstKey(cfg string, d function.Deprecation) string {
	if strings.Contains(cfg, "kind: ConfigMap") {
		return d.OldFlat
	}
	return d.Old
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// items is the objects of an output, a ResourceList's items or a plain stream, without results.
func items(t *testing.T, out string) string {
	t.Helper()
	if strings.HasPrefix(out, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList") {
		n, err := yaml.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		s, err := n.Pipe(yaml.Lookup("items"))
		if err != nil || s == nil {
			t.Fatalf("no items in %q", out)
		}
		return s.MustString()
	}
	return out
}
