package app

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

func TestCarrierShapeErrors(t *testing.T) {
	const kfHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const ssaHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const apHead = "apiVersion: spark.apache.org/v1beta1\nkind: SparkApplication\nmetadata: {name: pi}\n"
	const depHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nb, namespace: ns}\n"
	tests := []struct {
		name, doc string
		route     Injection
		want      string
	}{
		{"kubeflow spec list", kfHead + "spec: [a]\n", InjectTemplate,
			`SparkApplication ns/pi: spec: is a list, want a mapping`},
		{"kubeflow sparkConf list", kfHead + "spec: {sparkConf: [spark.ui.port=0]}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.sparkConf: is a list, want a mapping`},
		{"kubeflow sparkConf value mapping", kfHead + "spec: {sparkConf: {spark.ui.port: {a: b}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.sparkConf["spark.ui.port"]: is a mapping, want a string`},
		{"kubeflow template string", kfHead + "spec: {driver: {template: oops}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template: is the scalar "oops", want a mapping`},
		{"kubeflow template string on webhook injection", kfHead + "spec: {driver: {template: oops}}\n", InjectWebhook,
			`SparkApplication ns/pi: spec.driver.template: is the scalar "oops", want a mapping`},
		{"kubeflow template containers mapping", kfHead + "spec: {driver: {template: {spec: {containers: {name: x}}}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers: is a mapping, want a list`},
		{"kubeflow driver list", kfHead + "spec: {driver: [x]}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver: is a list, want a mapping`},
		{"kubeflow webhook initContainers mapping", kfHead + "spec: {driver: {initContainers: {name: x}}}\n", InjectWebhook,
			`SparkApplication ns/pi: spec.driver.initContainers: is a mapping, want a list`},
		{"kubeflow webhook lifecycle list", kfHead + "spec: {driver: {lifecycle: []}}\n", InjectWebhook,
			`SparkApplication ns/pi: spec.driver.lifecycle: is a list, want a mapping`},
		{"kubeflow template-route lifecycle list", ssaHead + "spec: {template: {driver: {lifecycle: x}}}\n", InjectTemplate,
			`ScheduledSparkApplication ns/pi: spec.template.driver.lifecycle: is the scalar "x", want a mapping`},
		{"kubeflow hostNetwork word", kfHead + "spec: {driver: {hostNetwork: yes}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.hostNetwork: is "yes", want true or false`},
		{"kubeflow labels list", kfHead + "spec: {driver: {labels: [a]}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.labels: is a list, want a mapping`},
		{"kubeflow serviceAccount mapping", kfHead + "spec: {driver: {serviceAccount: {a: b}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.serviceAccount: is a mapping, want a scalar`},
		{"scheduled template list", ssaHead + "spec: {template: [x]}\n", InjectTemplate,
			`ScheduledSparkApplication ns/pi: spec.template: is a list, want a mapping`},
		{"scheduled sparkConf string", ssaHead + "spec: {template: {sparkConf: spark.ui.port=0}}\n", InjectTemplate,
			`ScheduledSparkApplication ns/pi: spec.template.sparkConf: is the scalar "spark.ui.port=0", want a mapping`},
		{"apache podTemplateSpec string", apHead + "spec: {driverSpec: {podTemplateSpec: oops}}\n", InjectTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec: is the scalar "oops", want a mapping`},
		{"apache containers mapping", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {containers: {name: x}}}}}\n", InjectTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.containers: is a mapping, want a list`},
		{"apache labels list", apHead + "spec: {driverSpec: {podTemplateSpec: {metadata: {labels: [a]}}}}\n", InjectTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.metadata.labels: is a list, want a mapping`},
		{"no name", "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {namespace: ns}\nspec: {}\n", InjectTemplate,
			`SparkApplication ns/: metadata.name: is empty: the application cannot be named`},
		{"workload replicas word", depHead + "spec: {replicas: two, template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c}]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.replicas: is "two", want an integer`},
		{"workload args string", depHead + "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, args: --conf a=b}]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].args: is the scalar "--conf a=b", want a list`},
		{"workload arg mapping", depHead + "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, command: [{a: b}]}]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].command[0]: is a mapping, want a string`},
		{"workload container scalar", depHead + "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [x]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0]: is not a mapping`},
		{"workload volumes mapping", depHead + "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {volumes: {a: b}, containers: [{name: c}]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.volumes: is a mapping, want a list`},
		{"workload hostNetwork number", depHead + "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {hostNetwork: 1, containers: [{name: c}]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.hostNetwork: is "1", want true or false`},
		{"pod spec list", "apiVersion: v1\nkind: Pod\nmetadata: {name: d, labels: {spark-role: driver}}\nspec: []\n", InjectTemplate,
			`Pod d: spec: is a list, want a mapping`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, tc.doc)
			c, err := DetectCarrier(objs[0], CarrierOptions{KubeflowInjection: tc.route})
			var se *ShapeError
			if c != nil || !errors.As(err, &se) {
				t.Fatalf("DetectCarrier = %v, %v; want a *ShapeError", c, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestReshapedFixturesNeverPanic replaces every node of every carrier fixture, one at a
// time, with a scalar, a list, a mapping and a null, and runs detection and every accessor
// on the result: each either works or returns a *ShapeError (ErrNoPodSpec for the webhook
// route's pod spec), never panics.
func TestReshapedFixturesNeverPanic(t *testing.T) {
	files := []string{
		"kubeflow-sparkapplication.yaml", "kubeflow-scheduled.yaml", "apache-v1.yaml", "apache-v1-template.yaml",
		"apache-v1beta1.yaml", "notebook-statefulset.yaml", "connect-deployment.yaml", "driver-job.yaml", "driver-cronjob.yaml",
	}
	replacements := []func() *yaml.Node{
		func() *yaml.Node { return yamlx.NewStr("x") },
		func() *yaml.Node { return yamlx.NewSeq("x") },
		func() *yaml.Node { return yamlx.NewMap("x", "y") },
		func() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"} },
	}
	runs, shapeErrs := 0, 0
	for _, file := range files {
		b, err := os.ReadFile("../../testdata/assets/carriers/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for doc := 0; doc < len(readObjects(t, string(b))); doc++ {
			count := len(allNodes(readObjects(t, string(b))[doc].YNode()))
			for i := 1; i < count; i++ { // 0 is the object itself
				for _, repl := range replacements {
					objs := readObjects(t, string(b))
					nodes := allNodes(objs[doc].YNode())
					*nodes[i] = *repl()
					for _, route := range []Injection{InjectTemplate, InjectWebhook} {
						runs++
						if err := exercise(objs[doc], CarrierOptions{KubeflowInjection: route, ConfigMap: configMapsOf(objs)}); err != nil {
							var se *ShapeError
							if !errors.As(err, &se) && !errors.Is(err, ErrNoPodSpec) {
								t.Fatalf("%s node %d: %v", file, i, err)
							}
							shapeErrs++
						}
					}
				}
			}
		}
	}
	t.Logf("%d runs, %d shape errors", runs, shapeErrs)
	// The test must have reached the error paths, not only the happy ones.
	if runs < 1000 || shapeErrs < runs/10 {
		t.Errorf("%d runs, %d shape errors: the reshaping did not exercise the error paths", runs, shapeErrs)
	}
}

// exercise detects a carrier and uses every accessor; a panic is turned into a test error.
func exercise(rn *yaml.RNode, opts CarrierOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	c, err := DetectCarrier(rn, opts)
	if err != nil || c == nil {
		return err
	}
	c.Settings()
	c.IdentityLabels()
	c.Prefix()
	c.PathPrefix()
	c.TemplateInjectionRefused()
	for _, s := range []Slot{SlotPodSpec, SlotInitContainers, SlotVolumes, SlotDriverContainer, SlotPodLabels} {
		if _, _, err := c.Lookup(s); err != nil && !errors.Is(err, ErrNoPodSpec) {
			return err
		}
		if _, _, err := c.Ensure(s); err != nil && !errors.Is(err, ErrNoPodSpec) {
			var se *ShapeError
			if errors.As(err, &se) && strings.HasSuffix(se.Msg, "has no container to run the driver in") {
				continue
			}
			return err
		}
	}
	return nil
}

// allNodes lists n and its descendants, depth first.
func allNodes(n *yaml.Node) []*yaml.Node {
	out := []*yaml.Node{n}
	for _, ch := range n.Content {
		out = append(out, allNodes(ch)...)
	}
	return out
}
