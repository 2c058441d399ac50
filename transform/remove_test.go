package transform

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

func build(t *testing.T, doc string, route app.Injection) (*app.Model, []*yaml.RNode) {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(doc), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	m := app.BuildWith(items, app.CarrierOptions{KubeflowInjection: route})
	if len(m.Apps) != 1 {
		t.Fatalf("%d apps, carrier errors %+v", len(m.Apps), m.CarrierErrors)
	}
	return m, items
}

func str(t *testing.T, rn *yaml.RNode) string {
	t.Helper()
	s, err := rn.String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRemoveRuntimeKeepsUsersEmptyFields: removal takes out sparkui's entries only; a list or
// a lifecycle the user wrote empty is theirs and stays, on every carrier (the Pod's own
// removal used to drop a `lifecycle: {}` it never wrote into).
func TestRemoveRuntimeKeepsUsersEmptyFields(t *testing.T) {
	for name, doc := range map[string]string{
		"pod": `apiVersion: v1
kind: Pod
metadata: {name: d-driver, namespace: ns, labels: {spark-role: driver, spark-app-selector: spark-1}}
spec:
  initContainers: []
  volumes: []
  containers: [{name: spark-kubernetes-driver, lifecycle: {}, volumeMounts: []}]
`,
		"kubeflow": `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  driver:
    template:
      spec:
        initContainers: []
        volumes: []
        containers: [{name: spark-kubernetes-driver, lifecycle: {}, volumeMounts: []}]
`,
	} {
		t.Run(name, func(t *testing.T) {
			m, items := build(t, doc, app.InjectTemplate)
			before := str(t, items[0])
			remove(t, m.Apps[0])
			if got := str(t, items[0]); got != before {
				t.Errorf("the removal changed the object:\n%s\nwant\n%s", got, before)
			}
		})
	}
}

// TestRemoveRuntimeUndoesInject: on every carrier, removing the runtime from sparkui's
// output gives back the input: the lists and the lifecycle sparkui created go with their
// last entry, and a spark-submit Pod keeps Spark's spark-app-selector label.
func TestRemoveRuntimeUndoesInject(t *testing.T) {
	for name, tc := range map[string]struct {
		doc   string
		route app.Injection
	}{
		"pod": {`apiVersion: v1
kind: Pod
metadata: {name: d-driver, namespace: ns, labels: {spark-role: driver, spark-app-selector: spark-1}}
spec:
  containers: [{name: spark-kubernetes-driver}]
`, app.InjectTemplate},
		"kubeflow webhook": {`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  driver: {cores: 1}
`, app.InjectWebhook},
		"deployment": {`apiVersion: apps/v1
kind: Deployment
metadata: {name: nb, namespace: ns}
spec:
  template:
    metadata: {labels: {spark-role: driver}}
    spec:
      containers: [{name: nb}]
`, app.InjectTemplate},
	} {
		t.Run(name, func(t *testing.T) {
			m, items := build(t, tc.doc, tc.route)
			before := str(t, items[0])
			inject(t, m.Apps[0], Options{RuntimeImage: "r:1"})
			if str(t, items[0]) == before {
				t.Fatal("the injection added nothing")
			}
			remove(t, m.Apps[0])
			if got := str(t, items[0]); got != before {
				t.Errorf("after the removal:\n%s\nwant\n%s", got, before)
			}
		})
	}
}
