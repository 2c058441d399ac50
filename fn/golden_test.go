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
