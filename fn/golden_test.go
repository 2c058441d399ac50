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
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// UPDATE_GOLDEN=1 go test ./fn -run TestGolden rewrites the expected files; review the diff.
var update = os.Getenv("UPDATE_GOLDEN") == "1"

func processor() framework.ResourceListProcessor {
	return framework.ResourceListProcessorFunc(function.Process)
}

// TestGolden runs the function on every testdata/*/input.yaml ResourceList and compares the
// whole output, items and results, with expected.yaml.
func TestGolden(t *testing.T) {
	checker := frameworktestutil.ProcessorResultsChecker{
		TestDataDirectory:        "../testdata",
		Processor:                processor,
		UpdateExpectedFromActual: update,
	}
	checker.Assert(t)
	if n := len(checker.TestCasesRun()); n < 25 {
		t.Errorf("only %d golden cases ran", n)
	}
}

// TestGoldenLayout: testdata/ holds golden cases, one directory each with input.yaml and
// expected.yaml, and the shared assets other tests read under testdata/assets/ alone. A case
// missing a file would otherwise be skipped by the checker without a word, and an asset among
// the cases would be taken for one.
func TestGoldenLayout(t *testing.T) {
	entries, err := os.ReadDir("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "assets" {
			continue
		}
		if !e.IsDir() {
			t.Errorf("testdata/%s: a file among the golden cases (shared assets go under testdata/assets/)", e.Name())
			continue
		}
		for _, f := range []string{"input.yaml", "expected.yaml"} {
			if _, err := os.Stat(filepath.Join("../testdata", e.Name(), f)); err != nil {
				t.Errorf("testdata/%s: not a golden case: %v (shared assets go under testdata/assets/)", e.Name(), err)
			}
		}
	}
}

func runProcessor(t testing.TB, in []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &out, KeepReaderAnnotations: true}
	if err := framework.Execute(processor(), rw); err != nil {
		t.Fatalf("execute: %v", err)
	}
	return out.Bytes()
}

func fixtures(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob("../testdata/*/input.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return dirs
}

// TestIdempotent: the function on its own output changes nothing, byte for byte, and reports
// nothing the first run did not. A result that says what the first run changed (a value of the
// user's it replaced, an object it removed) has nothing left to say the second time.
func TestIdempotent(t *testing.T) {
	for _, in := range fixtures(t) {
		t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			first := runProcessor(t, src)
			second := runProcessor(t, first)
			items1, results1 := splitResults(t, first)
			items2, results2 := splitResults(t, second)
			if d := cmp.Diff(items1, items2); d != "" {
				t.Errorf("second run changed the output (-first +second):\n%s", d)
			}
			for _, r := range results2 {
				if !slices.Contains(results1, r) {
					t.Errorf("second run reports what the first did not:\n%s", r)
				}
			}
			// Only a report of a change the first run made may be gone the second time; an
			// error is about the input, which the first run left as it was.
			for _, r := range results1 {
				if !slices.Contains(results2, r) && strings.Contains(r, "severity: error") {
					t.Errorf("second run no longer reports an error of the first:\n%s", r)
				}
			}
		})
	}
}

// splitResults separates a written ResourceList into everything but its results, as
// written, and its results, one YAML document each.
func splitResults(t *testing.T, out []byte) (string, []string) {
	t.Helper()
	rl, err := yaml.Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rl.Pipe(yaml.Get("results"))
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		return string(out), nil
	}
	var rs []string
	for _, r := range res.Content() {
		rs = append(rs, yaml.NewRNode(r).MustString())
	}
	if err := rl.PipeE(yaml.Clear("results")); err != nil {
		t.Fatal(err)
	}
	return rl.MustString(), rs
}
