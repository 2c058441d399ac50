package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildBinary builds a main package as `make build` does (static, stripped) into a temporary
// directory: start-up cost depends on what the linked packages initialise, which only the built
// binary shows.
func buildBinary(b *testing.B, pkg, name string) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out
}

// benchmarkProcess runs the binary once per iteration on a ResourceList of one spark-submit
// application, as kustomize runs an exec function once per build.
func benchmarkProcess(b *testing.B, pkg, name string, in []byte) {
	bin := buildBinary(b, pkg, name)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin)
		cmd.Stdin = bytes.NewReader(in)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", bin, err)
		}
		if out.Len() < len(in) {
			b.Fatalf("%s wrote %d bytes for %d in", bin, out.Len(), len(in))
		}
	}
}

// BenchmarkStartFunction is the whole sparkui-fn process on one application;
// BenchmarkStartFloor a no-op kyaml function (fn/internal/noop) on the same input. The goal
// was a ratio of at most 1.3 (docs/performance.md has what was reached).
func BenchmarkStartFunction(b *testing.B) { benchmarkProcess(b, ".", "sparkui-fn", appsInput(b, 1)) }

func BenchmarkStartFloor(b *testing.B) {
	benchmarkProcess(b, "./internal/noop", "noop", appsInput(b, 1))
}

// BenchmarkStartFloorOutput is the no-op on the function's output (about twice the input):
// the reading and writing no implementation of the function can avoid.
func BenchmarkStartFloorOutput(b *testing.B) {
	benchmarkProcess(b, "./internal/noop", "noop", runProcessor(b, appsInput(b, 1)))
}
