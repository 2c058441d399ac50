package app

import (
	"fmt"
	"testing"

	"github.com/sparkui/sparkui/internal/names"
)

const kubeflowApp = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: %s, namespace: analytics}
spec:
  type: Scala
  mode: cluster
  image: spark:3.5.5
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  driver: {serviceAccount: spark}
`

// TestNoKubeflowNameCollision: for app foo next to app foo-sparkui, the pinned
// name foo-sparkui-ui-svc is the kubeflow operator's UI Service of foo-sparkui
// (<app>-ui-svc). sparkui must name foo's UI Service otherwise, deterministically, whichever
// of the two comes first, and report the operator's names of the namespace.
func TestNoKubeflowNameCollision(t *testing.T) {
	for _, order := range [][2]string{{"foo", "foo-sparkui"}, {"foo-sparkui", "foo"}} {
		objs := readObjects(t, fmt.Sprintf(kubeflowApp, order[0])+"---\n"+fmt.Sprintf(kubeflowApp, order[1]))
		m := BuildWith(objs, CarrierOptions{})
		if len(m.Apps) != 2 {
			t.Fatalf("%v: %d apps", order, len(m.Apps))
		}
		operator := map[string]bool{}
		for _, a := range []string{"foo", "foo-sparkui"} {
			operator[names.KubeflowUIService(a)] = true
			if who := m.OperatorServices["analytics"][names.KubeflowUIService(a)]; who == "" {
				t.Errorf("%v: the operator's Service %s of %s is not reported", order, names.KubeflowUIService(a), a)
			}
		}
		got := map[string]string{}
		for _, a := range m.Apps {
			got[a.Carrier.Name] = a.UIServiceName
			if operator[a.UIServiceName] {
				t.Errorf("%v: %s's UI Service %s is a name the kubeflow operator gives a Service", order, a.Carrier.Name, a.UIServiceName)
			}
		}
		want := map[string]string{"foo": names.Fit("foo-sparkui", names.UISvcSuffix, func(n string) bool { return operator[n] }), "foo-sparkui": "foo-sparkui-sparkui-ui-svc"}
		if got["foo"] != want["foo"] || got["foo-sparkui"] != want["foo-sparkui"] || got["foo"] == "foo-sparkui-ui-svc" {
			t.Errorf("%v: UI Services %v, want %v", order, got, want)
		}
	}
}
