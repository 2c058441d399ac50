package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
)

// peakRSS runs bin on in and returns what it wrote and its peak resident set in bytes (the
// child's rusage ru_maxrss, which Linux reports in KiB).
func peakRSS(b *testing.B, bin string, in []byte) ([]byte, int64) {
	b.Helper()
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", bin, err, errOut.Bytes())
	}
	return out.Bytes(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
}

// BenchmarkPeakRSS/apps=N is the peak resident memory of the built sparkui-fn on N kubeflow
// SparkApplications, against the no-op kyaml function (fn/internal/noop) on the function's
// output, so both write the same bytes: the memory no implementation that writes this output
// through kyaml can avoid. Metrics: fn-maxrss-B and noop-maxrss-B (peak RSS) and their ratio; the
// goal is a ratio of at most 1.5 at 5,000 applications (docs/performance.md).
func BenchmarkPeakRSS(b *testing.B) {
	fnBin := buildBinary(b, ".", "sparkui-fn")
	noopBin := buildBinary(b, "./internal/noop", "noop")
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("apps=%d/carrier=kubeflow", n), func(b *testing.B) {
			in := kubeflowInput(b, n)
			var fnMax, noopMax int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, fnRSS := peakRSS(b, fnBin, in)
				again, noopRSS := peakRSS(b, noopBin, out)
				if !bytes.Equal(out, again) {
					b.Fatalf("the no-op does not write the function's output back unchanged (%d bytes, then %d)", len(out), len(again))
				}
				fnMax, noopMax = max(fnMax, fnRSS), max(noopMax, noopRSS)
			}
			b.ReportMetric(float64(fnMax), "fn-maxrss-B")
			b.ReportMetric(float64(noopMax), "noop-maxrss-B")
			b.ReportMetric(float64(fnMax)/float64(noopMax), "fn/noop")
		})
	}
}
