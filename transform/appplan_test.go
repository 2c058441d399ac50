package transform

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

// TestAppPlan: everything transform does for one spark-submit application, read from its plan
// alone: the zero ports of the driver container and Service, the slots and the runtime,
// sparkui's earlier UI Service and RBAC brought back in place, the route of the configured kind
// added and the one of another kind removed, the proxy settings in spark.properties. Planning
// writes nothing: the input is the same after it.
func TestAppPlan(t *testing.T) {
	const doc = `apiVersion: v1
kind: Pod
metadata:
  name: pi-driver
  namespace: ns
  labels: {spark-app-selector: spark-abc, spark-role: driver}
spec:
  serviceAccountName: spark
  containers:
  - name: spark-kubernetes-driver
    ports:
    - {name: driver-rpc-port, containerPort: 7078}
    - {name: spark-ui, containerPort: 0}
  volumes:
  - {name: spark-conf-volume-driver, configMap: {name: spark-drv-conf}}
---
apiVersion: v1
kind: Service
metadata: {name: pi-driver-svc, namespace: ns}
spec:
  clusterIP: None
  selector: {spark-app-selector: spark-abc, spark-role: driver}
  ports:
  - {name: driver-rpc-port, port: 7078, targetPort: 0}
  - {name: spark-ui, port: 0}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: spark-drv-conf, namespace: ns}
data:
  spark.properties: |
    spark.app.id=spark-abc
    spark.ui.port=0
---
apiVersion: v1
kind: Service
metadata:
  name: pi-ui-svc
  namespace: ns
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-abc}
spec:
  selector: {stale: "true"}
  ports: [{name: spark-ui, port: 4040}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pi-ui-svc-binder
  namespace: ns
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-abc}
rules: []
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pi-ui-svc
  namespace: ns
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-abc}
spec: {}
`
	items, err := (&kio.ByteReader{Reader: strings.NewReader(doc), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := kio.StringAll(items)
	m := app.BuildWith(items, app.CarrierOptions{})
	o := Options{ServiceEnabled: true, ServiceType: "ClusterIP", RuntimeImage: "r:1", CreateRBAC: true,
		Route: RouteOptions{Kind: RouteHTTPRoute, PathPrefix: "/spark/{name}", ParentRefs: []ParentRef{{Name: "gw"}}}}
	plans := PlanApps(m, o)
	if after, _ := kio.StringAll(items); after != before {
		t.Fatalf("planning changed the input:\n%s\nwant\n%s", after, before)
	}
	got := plans[0].Strings()
	want := []string{
		"edit Pod ns/pi-driver: drop spec.containers[0].ports [1]",
		"edit Service ns/pi-driver-svc: remove spec.ports[0].targetPort",
		"edit Service ns/pi-driver-svc: drop spec.ports [1] keeping the list",
		"prepare: ensure slot podLabels",
		"prepare: ensure slot initContainers",
		"prepare: ensure slot volumes",
		"prepare: ensure slot driverContainer",
		"add RoleBinding ns/pi-ui-svc-binder",
		"add HTTPRoute ns/pi-ui-svc",
		"update Service ns/pi-ui-svc",
		"update Role ns/pi-ui-svc-binder",
		"remove Ingress ns/pi-ui-svc",
		"carrier: set slot podLabels spark-app-selector if absent = spark-abc",
		"carrier: upsert slot initContainers sparkui-runtime",
		"carrier: upsert slot volumes sparkui-runtime",
		"carrier: remove spec.volumes [sparkui-runtime-auth]",
		"carrier: upsert slot driverContainer.volumeMounts sparkui-runtime",
		"carrier: remove spec.containers[0].volumeMounts [sparkui-runtime-auth]",
		"carrier: set slot driverContainer.lifecycle preStop if sparkui's preStop = {…}",
		"conf set spark.ui.proxyBase = /spark/pi-driver",
		"conf set spark.ui.proxyRedirectUri = /",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Executed, the plan gives what it said: the Ingress gone, the HTTPRoute added after the
	// input, the stale selector off the UI Service, the properties rewritten.
	out, notes := Apply(m, o)
	var kinds []string
	for _, rn := range out {
		kinds = append(kinds, rn.GetKind()+"/"+rn.GetName())
	}
	wantKinds := []string{"Pod/pi-driver", "Service/pi-driver-svc", "ConfigMap/spark-drv-conf", "Service/pi-ui-svc", "Role/pi-ui-svc-binder",
		"RoleBinding/pi-ui-svc-binder", "HTTPRoute/pi-ui-svc"}
	if !slices.Equal(kinds, wantKinds) || len(notes) != 0 {
		t.Errorf("output %v, notes %+v; want %v and none", kinds, notes, wantKinds)
	}
	if sel, _ := items[3].Pipe(yaml.Lookup("spec", "selector")); sel != nil {
		t.Errorf("UI Service keeps its selector: %s", sel.MustString())
	}
	if props := items[2].GetDataMap()["spark.properties"]; !strings.Contains(props, "spark.ui.proxyBase=/spark/pi-driver") {
		t.Errorf("spark.properties = %q, want the proxyBase", props)
	}
}
