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

// kubeflowInput is a ResourceList of n kubeflow SparkApplications shaped like the operator's
// own spark-pi example (testdata/assets/carriers), one namespace: what a platform repo keeps.
func kubeflowInput(tb testing.TB, n int) []byte {
	tb.Helper()
	src, err := os.ReadFile("../testdata/assets/carriers/kubeflow-sparkapplication.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < n; i++ {
		doc := strings.Replace(string(src), "name: pi-estimate", fmt.Sprintf("name: pi-estimate-%d", i), 1)
		for j, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
			if j == 0 {
				b.WriteString("- ")
			} else {
				b.WriteString("  ")
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// carrierInput is the input of a benchmark case: spark-submit applications, or kubeflow
// SparkApplications (carrier=kubeflow).
func carrierInput(tb testing.TB, carrier string, n int) []byte {
	switch carrier {
	case "kubeflow":
		return kubeflowInput(tb, n)
	case "kubeflow-routes":
		return append(kubeflowInput(tb, n), routesConfig...)
	}
	return appsInput(tb, n)
}

// routesConfig turns every feature of docs/routes.md and docs/history.md on: an HTTPRoute and
// a GRPCRoute per application under a templated prefix (proxyBase written into each
// sparkConf), and the History Server hand-off.
const routesConfig = `functionConfig:
  apiVersion: sparkui.dev/v1alpha1
  kind: SparkUIService
  metadata: {name: sparkui}
  spec:
    route:
      kind: HTTPRoute
      hostname: spark.example.com
      pathPrefix: /ui/{namespace}/{name}
      parentRefs: [{name: gateway, namespace: gateway-system}]
      grpc: true
      grpcHostname: "{name}.connect.example.com"
    historyServer: {url: "https://history.example.com"}
`

// benchCases are the rows of make bench: spark-submit applications at three sizes (named
// apps=N, as before carriers existed) and 1,000 kubeflow SparkApplications
// (apps=1000/carrier=kubeflow), also with routes and the History Server hand-off on
// (carrier=kubeflow-routes).
var benchCases = []struct {
	carrier string
	n       int
}{{"", 1}, {"", 100}, {"", 1000}, {"kubeflow", 1000}, {"kubeflow-routes", 1000}}

func benchName(carrier string, n int) string {
	name := fmt.Sprintf("apps=%d", n)
	if carrier != "" {
		name += "/carrier=" + carrier
	}
	return name
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
	for _, c := range benchCases {
		b.Run(benchName(c.carrier, c.n), func(b *testing.B) { benchmarkOn(b, processor(), carrierInput(b, c.carrier, c.n)) })
	}
}

func BenchmarkFloor(b *testing.B) {
	for _, c := range benchCases {
		b.Run(benchName(c.carrier, c.n), func(b *testing.B) { benchmarkOn(b, noop, carrierInput(b, c.carrier, c.n)) })
	}
}

// BenchmarkFloorOutput reads and writes the function's output with the no-op function: the
// I/O the function cannot avoid, since what it writes is larger than what it reads.
func BenchmarkFloorOutput(b *testing.B) {
	for _, c := range benchCases {
		b.Run(benchName(c.carrier, c.n), func(b *testing.B) { benchmarkOn(b, noop, runProcessor(b, carrierInput(b, c.carrier, c.n))) })
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
	// 3 SparkApplications: each rewritten, plus its UI Service, Role and RoleBinding.
	out = runProcessor(t, kubeflowInput(t, 3))
	if n := itemCount(t, out); n != 3*4 {
		t.Errorf("3 SparkApplications gave %d items, want 12", n)
	}
	if bytes.Contains(out, []byte("severity: error")) || !bytes.Contains(out, []byte("name: pi-estimate-2-sparkui-ui-svc")) {
		t.Errorf("kubeflow benchmark input: errors, or no UI Service for the last application:\n%s", out)
	}
	// With routes: also an HTTPRoute and a GRPCRoute each, and the prefix in each sparkConf.
	out = runProcessor(t, carrierInput(t, "kubeflow-routes", 3))
	if n := itemCount(t, out); n != 3*6 {
		t.Errorf("3 SparkApplications with routes gave %d items, want 18", n)
	}
	for _, want := range []string{"kind: HTTPRoute", "kind: GRPCRoute", "spark.ui.proxyBase: /ui/analytics/pi-estimate-2", "SPARKUI_HISTORY_URL"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("kubeflow-routes benchmark output lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("severity: error")) {
		t.Errorf("kubeflow-routes benchmark input produces errors:\n%s", out)
	}
}
