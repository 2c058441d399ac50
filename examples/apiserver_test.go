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

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// dualStack is a control plane that serves both IP families, so the dual-stack and IPv6
// fixtures are checked for real (a single-stack server refuses them whatever sparkui does),
// with the kubeflow and Apache operators' CRDs installed for the carrier fixtures, and the
// route kinds' CRDs (Gateway API HTTPRoute and GRPCRoute from the module cache, OpenShift's
// Route) for the route fixtures and examples.
func dualStack(t testing.TB) testcluster.Options {
	t.Helper()
	gw, err := testcluster.GatewayAPICRDs()
	if err != nil {
		t.Fatal(err)
	}
	return testcluster.Options{APIServerArgs: map[string][]string{
		"service-cluster-ip-range": {"10.0.0.0/24,fd00:10:96::/112"},
	}, CRDDirectoryPaths: append(gw, "../testdata/assets/crds", "../testdata/assets/crds-openshift", "../testdata/assets/crds-stackable")}
}

// The API server checks live here, with the other end-to-end checks of what the built
// function writes, rather than in fn/: there they would make every fuzzing build of fn
// instrument client-go and envtest.

// TestAPIServerAcceptsOutput: every object the function emits for every fixture and example
// is accepted by a real kube-apiserver (server-side dry run, strict field validation). The
// fixtures whose config is invalid pass the spark-submit input through untouched: those must
// be rejected, which proves the check can fail.
func TestAPIServerAcceptsOutput(t *testing.T) {
	c := testcluster.Shared(t, dualStack(t))
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
			// A SUI014 error (the functionConfig refused) leaves the input untouched; a SUI014
			// warning (a deprecated field, still read) does not.
			untouched := false
			// SUI021 says an object with a key defined twice cannot be applied: the client
			// refuses to decode it (kubectl's YAML v2: "mapping key already defined", the test
			// client's YAML v3: "already set in map"), before any request. Those objects must
			// be refused for exactly that, the others accepted.
			duplicateKeys := strings.Contains(string(src), "[SUI021]")
			// SUI030 names carriers whose fields have the wrong shape, left unchanged: the API
			// server must refuse exactly those.
			unreadable := map[string]bool{}
			if rl, err := yaml.Parse(string(src)); err == nil {
				if res, _ := rl.Pipe(yaml.Lookup("results")); res != nil {
					elems, _ := res.Elements()
					for _, r := range elems {
						rule, _ := r.GetString("tags.rule")
						kind, _ := r.GetString("resourceRef.kind")
						name, _ := r.GetString("resourceRef.name")
						if sev, _ := r.GetString("severity"); rule == "SUI014" && sev == "error" {
							untouched = true
						}
						// SUI047 names a Service whose port cannot be read, kept as written.
						if rule == "SUI030" || rule == "SUI047" {
							unreadable[kind+"/"+name] = true
						}
					}
				}
			}
			var rejected, duplicates []string
			n := 0
			for _, it := range items {
				if it.GetKind() == "Kptfile" || it.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
					continue
				}
				n++
				// kubeflow's spec.driver.template is x-kubernetes-preserve-unknown-fields: the
				// API server checks nothing inside it. Check the driver Pod Spark would start
				// from it instead (template metadata and spec kept, the driver container
				// completed; KubernetesUtils.loadPodFromTemplate, BasicDriverFeatureStep).
				if pod := kubeflowTemplatePod(t, it); pod != nil {
					if err := dryRun(ctx, t, c, pod); err != nil {
						if key := it.GetKind() + "/" + it.GetName(); unreadable[key] {
							// A wrong-shaped field inside the unvalidated template: the driver
							// Pod is what the API server refuses.
							delete(unreadable, key)
						} else {
							t.Errorf("%s %s: the driver Pod from its template is rejected: %v", it.GetKind(), it.GetName(), err)
						}
					}
				}
				err := dryRun(ctx, t, c, it)
				switch {
				case err == nil:
				case unreadable[it.GetKind()+"/"+it.GetName()] && err != nil:
					delete(unreadable, it.GetKind()+"/"+it.GetName())
				case unreadable[it.GetKind()+"/"+it.GetName()]:
					t.Errorf("%s %s: SUI030 says it cannot be read, but the API server accepts it", it.GetKind(), it.GetName())
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
			if len(unreadable) > 0 {
				t.Errorf("SUI030 names objects the output does not hold: %v", unreadable)
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
	c := testcluster.Shared(t, dualStack(t))
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

// kubeflowTemplatePod is the driver Pod Spark builds from a kubeflow SparkApplication's (or
// ScheduledSparkApplication's) spec.driver.template, as far as the API server's validation
// goes: the template's labels and spec, plus what Spark always sets (name, spark-role and
// spark-app-selector labels, restartPolicy Never, the driver container's image). nil when it
// is not such an object or has no template.
func kubeflowTemplatePod(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	if it.GetApiVersion() != "sparkoperator.k8s.io/v1beta2" {
		return nil
	}
	path := []string{"spec", "driver", "template"}
	if it.GetKind() == "ScheduledSparkApplication" {
		path = []string{"spec", "template", "driver", "template"}
	}
	tmpl, err := it.Pipe(yaml.Lookup(path...))
	if err != nil || tmpl == nil || tmpl.YNode().Kind != yaml.MappingNode {
		return nil // no template, or one SUI030 reports
	}
	pod := yaml.MustParse("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {}\n")
	if spec := tmpl.Field("spec"); spec != nil {
		s, err := spec.Value.String()
		if err != nil {
			t.Fatal(err)
		}
		pod.SetMapField(yaml.MustParse(s), "spec")
	}
	labels := map[string]string{}
	if md := tmpl.Field("metadata"); md != nil {
		if l := md.Value.Field("labels"); l != nil {
			_ = l.Value.VisitFields(func(n *yaml.MapNode) error {
				labels[n.Key.YNode().Value] = n.Value.YNode().Value
				return nil
			})
		}
	}
	labels["spark-role"] = "driver"
	labels["spark-app-selector"] = "spark-0123456789abcdef0123456789abcdef"
	if err := pod.SetLabels(labels); err != nil {
		t.Fatal(err)
	}
	if err := pod.SetName(it.GetName() + "-driver"); err != nil {
		t.Fatal(err)
	}
	if err := pod.SetNamespace(it.GetNamespace()); err != nil {
		t.Fatal(err)
	}
	spec, _ := pod.Pipe(yaml.Lookup("spec"))
	if err := spec.PipeE(yaml.SetField("restartPolicy", yaml.NewScalarRNode("Never"))); err != nil {
		t.Fatal(err)
	}
	// A priority class is checked by admission against the cluster's PriorityClasses, which
	// the test cluster does not have: out of scope for what sparkui writes.
	if err := spec.PipeE(yaml.Clear("priorityClassName")); err != nil {
		t.Fatal(err)
	}
	cs, _ := spec.Pipe(yaml.Lookup("containers"))
	if cs == nil {
		return pod
	}
	elems, _ := cs.Elements()
	for _, c := range elems {
		if c.Field("image") == nil {
			if err := c.PipeE(yaml.SetField("image", yaml.NewScalarRNode("apache/spark:3.5.5"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return pod
}

// TestAPIServerChecksKubeflowTemplate: the server takes anything inside a kubeflow driver
// template (preserve-unknown-fields), so only the Pod built from it can catch a bad sidecar:
// a broken restartPolicy passes in the SparkApplication and is refused in the Pod.
func TestAPIServerChecksKubeflowTemplate(t *testing.T) {
	c := testcluster.Shared(t, dualStack(t))
	ctx := context.Background()
	src, err := os.ReadFile("../testdata/carrier-kubeflow-template/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "restartPolicy: Always", "restartPolicy: Sometimes", 1)
	if bad == string(src) {
		t.Fatal("no native sidecar in the kubeflow template fixture")
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(bad), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	app := items[0]
	if app.GetKind() != "SparkApplication" {
		t.Fatalf("first item is a %s", app.GetKind())
	}
	if err := dryRun(ctx, t, c, app); err != nil {
		t.Errorf("the SparkApplication itself: %v (its template is not validated)", err)
	}
	pod := kubeflowTemplatePod(t, app)
	if err := dryRun(ctx, t, c, pod); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.initContainers[0].restartPolicy") {
		t.Errorf("the driver Pod from the broken template: want 422 naming spec.initContainers[0].restartPolicy, got %v", err)
	}
}
