package function

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// TestRuntimeAuthEveryCarrier: with spec.runtime.auth, every carrier fixture (and a
// spark-submit Pod) gets the credential's Secret volume in the slot its operator or
// controller carries into the driver Pod, the runtime mounts it, and on the kubeflow webhook
// route spec.driver.volumeMounts mounts it too: the webhook adds a spec.volumes entry only
// when the driver mounts it (kubeflow/spark-operator internal/webhook/sparkpod_defaulter.go,
// addVolumes). The output carries no error, a second run changes nothing, and a run without
// the credential removes it all.
func TestRuntimeAuthEveryCarrier(t *testing.T) {
	inputs, err := filepath.Glob("../../testdata/carrier-*/input.yaml")
	if err != nil || len(inputs) < 10 {
		t.Fatalf("carrier fixtures: %v, %v", inputs, err)
	}
	inputs = append(inputs, "../../testdata/random-port/input.yaml")
	const wantVolume = "name: sparkui-runtime-auth\nsecret:\n  secretName: spark-ui-jws\n  items:\n  - key: token\n    path: bearer-token\n"
	const wantMount = "name: sparkui-runtime-auth\nmountPath: /var/run/sparkui/auth\nreadOnly: true\n"
	seen := map[string]bool{}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		routes := []string{"template"}
		if strings.Contains(string(b), "sparkoperator.k8s.io/") {
			routes = append(routes, "webhook")
		}
		for _, route := range routes {
			name := filepath.Base(filepath.Dir(in)) + "/" + route
			t.Run(name, func(t *testing.T) {
				fc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\ndata:\n  authBearerSecret: spark-ui-jws/token\n  kubeflowInjection: " + route + "\n"
				items := process(t, readItems(t, in), fc)
				again := process(t, items, fc)
				if a, b := itemsString(t, items), itemsString(t, again); a != b {
					t.Errorf("not idempotent:\n%s\n---\n%s", a, b)
				}
				// The credential dropped from the config: every trace of it goes, and the output
				// is what the input without it gives.
				noAuth := strings.Replace(fc, "  authBearerSecret: spark-ui-jws/token\n", "", 1)
				if a, b := itemsString(t, process(t, readItems(t, in), noAuth)), itemsString(t, process(t, items, noAuth)); a != b {
					t.Errorf("auth removed: the output differs from the input's without auth:\n%s\n---\n%s", a, b)
				}
				opts := app.CarrierOptions{KubeflowInjection: app.InjectTemplate}
				if route == "webhook" {
					opts.KubeflowInjection = app.InjectWebhook
				}
				n := 0
				for _, it := range items {
					car, err := app.DetectCarrier(it, opts)
					if err != nil {
						t.Fatal(err)
					}
					if car == nil {
						continue
					}
					n++
					seen[car.ObjectKind+"/"+car.APIVersion] = true
					vols, vpath, _ := car.Lookup(app.SlotVolumes)
					if got := namedString(vols, sidecar.AuthVolumeName); got != wantVolume {
						t.Errorf("%s %s: %s has %q, want:\n%s", car.ObjectKind, car.Name, vpath, got, wantVolume)
					}
					inits, ipath, _ := car.Lookup(app.SlotInitContainers)
					_, rt := namedNode(inits, sidecar.ContainerName)
					if got := namedString(yamlx.Get(rt, "volumeMounts"), sidecar.AuthVolumeName); got != wantMount {
						t.Errorf("%s %s: the runtime in %s mounts %q, want:\n%s", car.ObjectKind, car.Name, ipath, got, wantMount)
					}
					drv, dpath, _ := car.Lookup(app.SlotDriverContainer)
					got := namedString(yamlx.Get(drv, "volumeMounts"), sidecar.AuthVolumeName)
					want := ""
					if car.Kind == app.KindKubeflow && car.Injection == app.InjectWebhook {
						want = wantMount
					}
					if got != want {
						t.Errorf("%s %s: the driver (%s) mounts %q, want %q", car.ObjectKind, car.Name, dpath, got, want)
					}
				}
				if n == 0 {
					t.Fatal("no carrier in the output")
				}
			})
		}
	}
	for _, k := range []string{"Pod/v1", "SparkApplication/sparkoperator.k8s.io/v1beta2", "ScheduledSparkApplication/sparkoperator.k8s.io/v1beta2",
		"SparkApplication/spark.apache.org/v1", "SparkApplication/spark.apache.org/v1beta1",
		"Deployment/apps/v1", "StatefulSet/apps/v1", "Job/batch/v1", "CronJob/batch/v1"} {
		if !seen[k] {
			t.Errorf("no %s carrier among the fixtures", k)
		}
	}
}

func readItems(t *testing.T, path string) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// process runs the function on copies of items with functionConfig fc; any error result
// fails the test.
func process(t *testing.T, items []*yaml.RNode, fc string) []*yaml.RNode {
	t.Helper()
	rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(fc)}
	for _, it := range items {
		rl.Items = append(rl.Items, it.Copy())
	}
	if err := Process(rl); err != nil {
		t.Fatal(err)
	}
	for _, r := range rl.Results {
		if r.Severity == framework.Error {
			t.Errorf("error result: %s", r.Message)
		}
	}
	return rl.Items
}

func itemsString(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var b strings.Builder
	if err := (kio.ByteWriter{Writer: &b}).Write(items); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func namedNode(list *yaml.Node, name string) (int, *yaml.Node) {
	for i, e := range yamlx.Items(list) {
		if yamlx.GetStr(e, "name") == name {
			return i, e
		}
	}
	return -1, nil
}

func namedString(list *yaml.Node, name string) string {
	_, n := namedNode(list, name)
	if n == nil {
		return ""
	}
	return yaml.NewRNode(n).MustString()
}
