package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// noop is the floor: a kyaml function that reads and writes the ResourceList unchanged.
var noop = framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })

func runNoop(t testing.TB, in []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := framework.Execute(noop, &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &out, KeepReaderAnnotations: true}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// appsInput is a ResourceList of n spark-submit applications shaped like the reference (one
// namespace, as a platform repo's overlay would have them).
func appsInput(tb testing.TB, n int) []byte {
	tb.Helper()
	src, err := os.ReadFile("../testdata/random-port-hostnetwork/input.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	s := string(src)
	start := strings.Index(s, "items:\n") + len("items:\n")
	items := s[start:]
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < n; i++ {
		r := strings.NewReplacer(
			"wordcount-5b2d0c9e1f3a7b64", fmt.Sprintf("wordcount-%016x", i),
			"spark-7e0d4c1a9b2f4e6d8c3b5a7f9e1d2c4b", fmt.Sprintf("spark-%032x", i),
			"spark-drv-9c1e7b3a5d2f4086", fmt.Sprintf("spark-drv-%016x", i),
		)
		b.WriteString(r.Replace(items))
	}
	return []byte(b.String())
}

func benchmark(b *testing.B, p framework.ResourceListProcessor, n int) {
	benchmarkOn(b, p, appsInput(b, n))
}

func benchmarkOn(b *testing.B, p framework.ResourceListProcessor, in []byte) {
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		if err := framework.Execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &out, KeepReaderAnnotations: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFunction/apps=N is the function; BenchmarkFloor/apps=N reads and writes the same
// input with a no-op kyaml function. The README reports their ratio (benchstat).
func BenchmarkFunction(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) { benchmark(b, processor(), n) })
	}
}

func BenchmarkFloor(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) { benchmark(b, noop, n) })
	}
}

// BenchmarkFloorOutput reads and writes the function's output with the no-op function: the
// I/O the function cannot avoid, since what it writes is larger than what it reads.
func BenchmarkFloorOutput(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) { benchmarkOn(b, noop, runProcessor(b, appsInput(b, n))) })
	}
}

func TestBenchInputIsValid(t *testing.T) {
	out := runProcessor(t, appsInput(t, 3))
	if n := itemCount(t, out); n != 3*6 {
		t.Errorf("3 apps gave %d items, want 18", n)
	}
	if bytes.Contains(out, []byte("severity: error")) {
		t.Errorf("benchmark input produces errors:\n%s", out)
	}
}
