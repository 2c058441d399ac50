package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sparkui/sparkui/internal/version"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The goldens carry the image of the current runtime contract; an upgrade that changes the
// contract writes the next one's.
var (
	oldImage = version.RuntimeImage()
	newImage = version.RuntimeRepository + ":" + version.RuntimeTag("99.0")
)

// renderedItems reads the items of a golden's expected.yaml (the function's output), after
// edit.
func renderedItems(t *testing.T, path string, edit func(string) string) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(edit(string(b))), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func same(s string) string { return s }

// TestBaselineRuntimeUpgradePerCarrier: a new runtime image (what a sparkui upgrade that
// changes the runtime contract does) in every carrier golden's output: one result per
// carrier, with the rule of what its controller does, the image as sparkui's field.
func TestBaselineRuntimeUpgradePerCarrier(t *testing.T) {
	want := map[string]string{
		"carrier-apache-v1":             "SUI073 SparkApplication",
		"carrier-apache-v1beta1":        "SUI073 SparkApplication",
		"carrier-cronjob":               "SUI073 CronJob",
		"carrier-deployment":            "SUI071 Deployment",
		"carrier-job":                   "SUI070 Job",
		"carrier-kubeflow-scheduled":    "SUI073 ScheduledSparkApplication",
		"carrier-kubeflow-template":     "SUI071 SparkApplication",
		"carrier-kubeflow-webhook":      "SUI071 SparkApplication",
		"carrier-kubeflow-sparkconnect": "SUI072 SparkConnect",
		"carrier-stackable":             "SUI072 SparkApplication",
		"carrier-statefulset":           "SUI071 StatefulSet",
		"fixed-port":                    "SUI071 Pod",
	}
	for dir, w := range want {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join("..", "testdata", dir, "expected.yaml")
			old := renderedItems(t, path, same)
			upgraded := renderedItems(t, path, func(s string) string { return strings.ReplaceAll(s, oldImage, newImage) })
			res, err := CompareRenderings(old, upgraded)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res {
				got = append(got, r.Tags["rule"]+" "+r.ResourceRef.Kind)
				if !strings.Contains(r.Message, "sparkui's fields ") || strings.Contains(r.Message, "your fields") {
					t.Errorf("%s: the image is sparkui's field, and only it changed: %s", dir, r.Message)
				}
				if r.Field == nil || !strings.HasSuffix(r.Field.Path, ".image") {
					t.Errorf("%s: field %v, want the image's path", dir, r.Field)
				}
			}
			if d := cmp.Diff([]string{w}, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			// Equal renderings: nothing.
			if res, _ := CompareRenderings(old, renderedItems(t, path, same)); len(res) != 0 {
				t.Errorf("equal renderings reported %v", res)
			}
		})
	}
}

// TestBaselineExactResult pins one whole result: a route's proxyBase (sparkui's conf key)
// and the user's own executor count in a kubeflow SparkApplication.
func TestBaselineExactResult(t *testing.T) {
	path := filepath.Join("..", "testdata", "carrier-kubeflow-template", "expected.yaml")
	old := renderedItems(t, path, same)
	changed := renderedItems(t, path, same)
	for _, rn := range changed {
		if rn.GetKind() == "SparkApplication" {
			if err := rn.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "sparkConf"), yaml.SetField("spark.ui.proxyBase", yaml.NewStringRNode("/spark/x"))); err != nil {
				t.Fatal(err)
			}
			if err := rn.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "executor"), yaml.SetField("instances", yaml.NewScalarRNode("7"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := CompareRenderings(old, changed)
	if err != nil || len(res) != 1 {
		t.Fatalf("%v %v", res, err)
	}
	r := res[0]
	if r.Severity != "warning" || r.Field.Path != `spec.sparkConf["spark.ui.proxyBase"]` {
		t.Errorf("severity %s field %s", r.Severity, r.Field.Path)
	}
	if !strings.Contains(r.Message, `sparkui's fields spec.sparkConf["spark.ui.proxyBase"]; your fields spec.executor.instances): the kubeflow operator invalidates`) {
		t.Errorf("message %q", r.Message)
	}
}

// TestBaselineNotReported: only a Service changed, a carrier added or removed, and a
// kubeflow application's suspend (applied in place: SUI074, info).
func TestBaselineNotReported(t *testing.T) {
	path := filepath.Join("..", "testdata", "carrier-kubeflow-template", "expected.yaml")
	old := renderedItems(t, path, same)
	onlySvc := renderedItems(t, path, same)
	services := 0
	for _, rn := range onlySvc {
		if rn.GetKind() == "Service" {
			services++
			if err := rn.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("type", yaml.NewStringRNode("NodePort"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if services == 0 {
		t.Fatal("no Service in the golden")
	}
	if res, err := CompareRenderings(old, onlySvc); err != nil || len(res) != 0 {
		t.Errorf("Service change reported: %v %v", res, err)
	}
	if res, err := CompareRenderings(nil, old); err != nil || len(res) != 0 {
		t.Errorf("added carriers reported: %v %v", res, err)
	}
	suspended := renderedItems(t, path, same)
	for _, rn := range suspended {
		if rn.GetKind() == "SparkApplication" {
			if err := rn.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("suspend", yaml.NewScalarRNode("true"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := CompareRenderings(old, suspended)
	if err != nil || len(res) != 1 || res[0].Tags["rule"] != "SUI074" || res[0].Field.Path != "spec.suspend" {
		t.Errorf("suspend: %v %v", res, err)
	}
}
