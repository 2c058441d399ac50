package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"

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

// TestIdempotent: the function on its own output changes nothing, byte for byte.
func TestIdempotent(t *testing.T) {
	for _, in := range fixtures(t) {
		t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			first := runProcessor(t, src)
			second := runProcessor(t, first)
			if d := cmp.Diff(string(first), string(second)); d != "" {
				t.Errorf("second run changed the output (-first +second):\n%s", d)
			}
		})
	}
}
