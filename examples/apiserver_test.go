package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/testcluster"
)

// dualStack is a control plane that serves both IP families, so the dual-stack and IPv6
// fixtures are checked for real (a single-stack server refuses them whatever sparkui does).
var dualStack = testcluster.Options{APIServerArgs: map[string][]string{
	"service-cluster-ip-range": {"10.0.0.0/24,fd00:10:96::/112"},
}}

// The API server checks live here, with the other end-to-end checks of what the built
// function writes, rather than in fn/: there they would make every fuzzing build of fn
// instrument client-go and envtest.

// TestAPIServerAcceptsOutput: every object the function emits for every fixture and example
// is accepted by a real kube-apiserver (server-side dry run, strict field validation). The
// fixtures whose config is invalid pass the spark-submit input through untouched: those must
// be rejected, which proves the check can fail.
func TestAPIServerAcceptsOutput(t *testing.T) {
	c := testcluster.Shared(t, dualStack)
	ctx := context.Background()
	outputs, _ := filepath.Glob("../testdata/*/expected.yaml")
	examples, _ := filepath.Glob("../examples/*/expected.yaml")
	if len(outputs) < 25 || len(examples) < 4 {
		t.Fatalf("found %d fixtures and %d examples", len(outputs), len(examples))
	}
	for _, path := range append(outputs, examples...) {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			items, err := (&kio.ByteReader{Reader: strings.NewReader(string(src)), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			untouched := strings.Contains(string(src), "[SUI014]")
			// SUI021 says an object with a key defined twice cannot be applied: the client
			// refuses to decode it (kubectl's YAML v2: "mapping key already defined", the test
			// client's YAML v3: "already set in map"), before any request. Those objects must
			// be refused for exactly that, the others accepted.
			duplicateKeys := strings.Contains(string(src), "[SUI021]")
			var rejected, duplicates []string
			n := 0
			for _, it := range items {
				if it.GetKind() == "Kptfile" || it.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
					continue
				}
				n++
				err := dryRun(ctx, t, c, it)
				switch {
				case err == nil:
				case untouched && apierrors.IsInvalid(err):
					rejected = append(rejected, it.GetKind())
				case duplicateKeys && (strings.Contains(err.Error(), "already defined") || strings.Contains(err.Error(), "already set in map")):
					duplicates = append(duplicates, it.GetKind())
				default:
					t.Errorf("%s %s rejected: %v", it.GetKind(), it.GetName(), err)
				}
			}
			if n == 0 {
				t.Fatal("no objects")
			}
			if duplicateKeys && strings.Join(duplicates, ",") != "Pod,Service" {
				t.Errorf("duplicate keys: refused %v, want the Pod and the Service (testdata/duplicate-keys)", duplicates)
			}
			if untouched && strings.Join(rejected, ",") != "Pod,Service" {
				t.Errorf("untouched spark-submit input: rejected %v, want the Pod and the Service", rejected)
			}
		})
	}
}

// TestAPIServerRejectsSparkSubmitInput: the reference manifests as spark-submit writes them
// (port 0) are refused, with the field named.
func TestAPIServerRejectsSparkSubmitInput(t *testing.T) {
	c := testcluster.Shared(t, dualStack)
	src, err := os.ReadFile("../examples/spark-submit/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(string(src)), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	// The API server's words (k8s.io/kubernetes pkg/apis/core/validation: a containerPort of 0
	// is a missing required value, a Service port of 0 an invalid one); SUI001 and SUI002 quote them.
	want := map[string]string{
		"Pod":     "spec.containers[0].ports[2].containerPort: Required value",
		"Service": "spec.ports[2].port: Invalid value: 0: must be between 1 and 65535, inclusive",
	}
	for _, it := range items {
		err := dryRun(context.Background(), t, c, it)
		field, expectReject := want[it.GetKind()]
		switch {
		case expectReject && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field)):
			t.Errorf("%s: want 422 naming %s, got %v", it.GetKind(), field, err)
		case !expectReject && err != nil:
			t.Errorf("%s: %v", it.GetKind(), err)
		}
	}
}

func dryRun(ctx context.Context, t *testing.T, c *testcluster.Cluster, it *yaml.RNode) error {
	t.Helper()
	doc, err := it.String()
	if err != nil {
		t.Fatal(err)
	}
	return c.DryRunCreateYAML(ctx, []byte(doc))
}
