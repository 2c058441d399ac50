package examples_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// goldenNotThroughKustomize are the golden cases kustomize cannot carry, each with why. Every
// other case runs.
var goldenNotThroughKustomize = map[string]string{
	"kustomize-name-prefix": "its input is a state inside kustomize (after namePrefix, before name references are fixed, with " +
		"internal.config.kubernetes.io/previousNames): built from it, kustomize's name-reference fix renames the Pod's ConfigMap volume " +
		"after the function, so the output is not the function's alone; examples/multi-app runs that path through the kustomize CLI",
}

// kustomizeRefuses are the golden cases whose input kustomize itself refuses before the
// function runs (the function reports them as errors of its own), with kustomize's words.
var kustomizeRefuses = map[string]string{
	"duplicate-carriers": "may not add resource with an already registered id",
	"duplicate-keys":     "yaml: unmarshal errors",
}

// TestGoldenThroughKustomize runs every golden case (testdata/*/input.yaml, the function's
// TestGolden) through kustomize as users run it: the input's items as resources, its
// functionConfig (or an empty ConfigMap: all defaults) as an exec transformer running
// bin/sparkui-fn. The objects kustomize writes must be the golden expected.yaml's items, the
// local-config ones aside (kustomize drops them) and compared as objects (kustomize writes
// its own order, formatting and bookkeeping annotations); a case whose expected results hold
// an error must fail the build (the function exits 1). That is kustomize's handling of every
// output sparkui writes (resource ids, the objects it adds, their annotations) checked for
// every rule and edge, not for the examples alone. ~80 builds: in process (krusty), as the
// CLI's ~0.3 s start per build would make it the slowest test here (BenchmarkKustomizeBuild).
func TestGoldenThroughKustomize(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join(root, "testdata", "*", "input.yaml"))
	if err != nil || len(inputs) < 25 {
		t.Fatalf("golden cases: %d, %v", len(inputs), err)
	}
	fn := filepath.Join(root, "bin", "sparkui-fn")
	ran := 0
	for _, in := range inputs {
		name := filepath.Base(filepath.Dir(in))
		if why, ok := goldenNotThroughKustomize[name]; ok {
			t.Logf("%s: not through kustomize: %s", name, why)
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			items, fc := readResourceList(t, in)
			expected, _ := readResourceList(t, filepath.Join(filepath.Dir(in), "expected.yaml"))
			wantError := expectsError(t, filepath.Join(filepath.Dir(in), "expected.yaml"))

			dir := t.TempDir()
			if fc == nil {
				fc = yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\n")
			}
			if err := fc.PipeE(yaml.SetAnnotation("config.kubernetes.io/function", "exec:\n  path: "+fn+"\n")); err != nil {
				t.Fatal(err)
			}
			writeItems(t, filepath.Join(dir, "sparkui.yaml"), []*yaml.RNode{fc})
			writeItems(t, filepath.Join(dir, "input.yaml"), items)
			write(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- input.yaml\ntransformers:\n- sparkui.yaml\n")

			out, err := krustyRun(dir)
			if wantError {
				why, refused := kustomizeRefuses[name]
				if !refused {
					why = "exit status 1" // sparkui-fn's, as the results hold an error
				}
				if err == nil || !strings.Contains(err.Error(), why) {
					t.Errorf("expected.yaml holds an error result, so the build must fail with %q; got error %v and:\n%s", why, err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("kustomize build: %v", err)
			}
			got, err := (&kio.ByteReader{Reader: strings.NewReader(string(out)), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			want := objects(t, expected)
			if len(want) == 0 {
				t.Fatal("expected.yaml has no object kustomize would write: the case proves nothing here")
			}
			if d := cmp.Diff(want, objects(t, got)); d != "" {
				t.Errorf("kustomize's output differs from expected.yaml's items (-golden +kustomize):\n%s", d)
			}
		})
	}
	if ran < 60 {
		t.Errorf("only %d golden cases ran through kustomize", ran)
	}
}

func readResourceList(t *testing.T, path string) ([]*yaml.RNode, *yaml.RNode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rw := &kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return items, rw.FunctionConfig
}

// expectsError: the golden's results hold an error.
func expectsError(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := yaml.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rl.Pipe(yaml.Lookup("results"))
	if err != nil || res == nil {
		return false
	}
	els, _ := res.Elements()
	for _, r := range els {
		if yaml.GetValue(r.Field("severity").Value) == "error" {
			return true
		}
	}
	return false
}

func writeItems(t *testing.T, path string, items []*yaml.RNode) {
	t.Helper()
	var b strings.Builder
	if err := (kio.ByteWriter{Writer: &b}).Write(items); err != nil {
		t.Fatal(err)
	}
	write(t, path, b.String())
}

// objects renders items as sorted JSON, one an object, without local-config objects and
// without the config.kubernetes.io/ and internal.config.kubernetes.io/ annotations tools
// add for their bookkeeping.
func objects(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		it = it.Copy()
		if it.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			continue
		}
		var drop []string
		for k := range it.GetAnnotations() {
			if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
				drop = append(drop, k)
			}
		}
		for _, k := range drop {
			if _, err := it.Pipe(yaml.ClearAnnotation(k)); err != nil {
				t.Fatal(err)
			}
		}
		if md := it.Field("metadata"); md != nil {
			if a := md.Value.Field("annotations"); a != nil && len(a.Value.YNode().Content) == 0 {
				if _, err := md.Value.Pipe(yaml.Clear("annotations")); err != nil {
					t.Fatal(err)
				}
			}
		}
		m, err := it.Map()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(m, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}
