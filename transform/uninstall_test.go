package transform

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

// TestUninstallPlan: on transform's output for an Apache SparkApplication with an HTTPRoute
// (its podTemplateSpec, driver container and sparkConf pin made by sparkui), the uninstall plan
// is RemovalPlan's entries plus the template sparkui made, pruned up to driverSpec, the pin,
// the route's proxy settings the UI Service records, and sparkui's four objects; then a
// leftover UI Service whose carrier is gone; and applying it gives back the input.
func TestUninstallPlan(t *testing.T) {
	const doc = `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  mainClass: org.apache.spark.examples.SparkPi
  sparkConf: {spark.ui.port: "4050"} # kept
  runtimeVersions: {sparkVersion: 4.1.1}
---
apiVersion: v1
kind: Service
metadata:
  name: gone-sparkui-ui-svc
  namespace: ns
  labels: {app.kubernetes.io/managed-by: sparkui, sparkui.dev/application: gone}
spec:
  ports: [{name: spark-ui, port: 4040}]
`
	items, err := (&kio.ByteReader{Reader: strings.NewReader(doc), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	input := itemsString(t, items)
	o := Options{ServiceEnabled: true, ServiceType: "ClusterIP", RuntimeImage: "r:1", CreateRBAC: true,
		Route: RouteOptions{Kind: RouteHTTPRoute, PathPrefix: "/spark/{name}", ParentRefs: []ParentRef{{Name: "gw"}}}}
	out, _ := Apply(app.BuildWith(items, app.CarrierOptions{}), o)
	m := app.BuildWith(out, app.CarrierOptions{})
	var got []string
	for _, p := range UninstallPlans(m) {
		got = append(got, p.Strings()...)
	}
	want := []string{
		"pin: conf remove spark.kubernetes.driver.podTemplateContainerName",
		"remove Service ns/pi-sparkui-ui-svc",
		"remove Role ns/pi-sparkui-ui-svc-binder",
		"remove RoleBinding ns/pi-sparkui-ui-svc-binder",
		"remove HTTPRoute ns/pi-sparkui-ui-svc",
		`carrier: remove spec.driverSpec.podTemplateSpec.metadata.labels["sparkui.dev/application"] if equal = pi`,
		"carrier: prune spec.driverSpec.podTemplateSpec.metadata",
		"carrier: remove spec.driverSpec.podTemplateSpec.spec.initContainers [sparkui-runtime]",
		"carrier: remove spec.driverSpec.podTemplateSpec.spec.volumes [sparkui-runtime sparkui-runtime-auth]",
		"carrier: remove spec.driverSpec.podTemplateSpec.spec.containers[0].volumeMounts [sparkui-runtime]",
		"carrier: remove spec.driverSpec.podTemplateSpec.spec.containers[0].lifecycle.preStop if sparkui's preStop",
		"carrier: remove spec.driverSpec.podTemplateSpec.spec.containers [spark-kubernetes-driver] if bare",
		"carrier: prune spec.driverSpec.podTemplateSpec.spec",
		"carrier: prune spec.driverSpec.podTemplateSpec",
		"carrier: prune spec.driverSpec",
		"conf remove spark.ui.proxyBase",
		"conf remove spark.ui.proxyRedirectUri",
		"remove Service ns/gone-sparkui-ui-svc",
	}
	if !slices.Equal(got, want) {
		t.Errorf("UninstallPlans:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	back, _ := Uninstall(app.BuildWith(out, app.CarrierOptions{}))
	if got, want := itemsString(t, back), input[:strings.Index(input, "---\n")]; got != want {
		t.Errorf("uninstalled:\n%s\nwant the Apache application alone, as written:\n%s", got, want)
	}
}

func itemsString(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var b strings.Builder
	if err := (kio.ByteWriter{Writer: &b}).Write(items); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
