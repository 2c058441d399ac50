package transform

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

// TestRemovalPlan: what sparkui takes out of a kubeflow SparkApplication whose UI was
// switched off, read from the plan alone: on the template injection, the webhook injection's
// copies first (its volumes are the SparkApplication's spec.volumes; the label goes only
// when it is this application's), then the template's runtime container, volumes, identity
// label, and the driver's mount and sparkui's preStop, each at its field path, nothing else.
func TestRemovalPlan(t *testing.T) {
	const doc = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  sparkConf: {spark.ui.enabled: "false"}
  driver:
    template:
      spec:
        containers: [{name: spark-kubernetes-driver}]
`
	m, _ := build(t, doc, app.InjectTemplate)
	got := RemovalPlan(m.Apps[0]).Strings()
	want := []string{
		"remove spec.driver.initContainers [sparkui-runtime]",
		"remove spec.volumes [sparkui-runtime sparkui-runtime-auth]",
		"remove spec.driver.volumeMounts [sparkui-runtime sparkui-runtime-auth]",
		"remove spec.driver.lifecycle.preStop if sparkui's preStop",
		`remove spec.driver.labels["sparkui.dev/application"] if equal = pi`,
		"remove spec.driver.template.spec.initContainers [sparkui-runtime sparkui-runtime-auth]",
		"remove spec.driver.template.spec.volumes [sparkui-runtime sparkui-runtime-auth]",
		`remove spec.driver.template.metadata.labels["sparkui.dev/application"]`,
		"remove spec.driver.template.spec.containers[0].volumeMounts [sparkui-runtime sparkui-runtime-auth]",
		"remove spec.driver.template.spec.containers[0].lifecycle.preStop if sparkui's preStop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("RemovalPlan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOtherInjectionPlanTemplate: switching to the webhook injection on sparkui's template
// output plans the template's entries out, the bare driver container sparkui created and the
// template's emptied spec, metadata and the template itself (each only if emptied by this
// plan), and applying it gives back the object without a template.
func TestOtherInjectionPlanTemplate(t *testing.T) {
	const doc = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  driver: {cores: 1}
`
	m, items := build(t, doc, app.InjectTemplate)
	before := str(t, items[0])
	inject(t, m.Apps[0], Options{RuntimeImage: "r:1"})
	// The same object, read as the webhook injection's carrier.
	m2 := app.BuildWith(items, app.CarrierOptions{KubeflowInjection: app.InjectWebhook})
	c := m2.Apps[0].Carrier
	got := OtherInjectionPlan(c).Strings()
	want := []string{
		`remove spec.driver.template.metadata.labels["sparkui.dev/application"] if equal = pi`,
		"prune spec.driver.template.metadata",
		"remove spec.driver.template.spec.initContainers [sparkui-runtime]",
		"remove spec.driver.template.spec.volumes [sparkui-runtime sparkui-runtime-auth]",
		"remove spec.driver.template.spec.containers[0].volumeMounts [sparkui-runtime]",
		"remove spec.driver.template.spec.containers[0].lifecycle.preStop if sparkui's preStop",
		"remove spec.driver.template.spec.containers [spark-kubernetes-driver] if bare",
		"prune spec.driver.template.spec",
		"prune spec.driver.template",
		"prune spec.driver",
	}
	if !slices.Equal(got, want) {
		t.Errorf("OtherInjectionPlan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	changed, err := OtherInjectionPlan(c).Apply(c)
	if err != nil || !changed {
		t.Fatalf("Apply = %v, %v; want a change", changed, err)
	}
	if got := str(t, items[0]); got != before {
		t.Errorf("after the plan:\n%s\nwant\n%s", got, before)
	}
	if changed, _ := OtherInjectionPlan(c).Apply(c); changed {
		t.Error("a second Apply changed the object")
	}
}

// TestPlanKeepsForeignEntries: the applier's conditions hold: a label of another value, a
// preStop that is not sparkui's and a container with more than its name stay.
func TestPlanKeepsForeignEntries(t *testing.T) {
	const doc = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  driver:
    labels: {sparkui.dev/application: other}
    lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}
    template:
      metadata: {labels: {sparkui.dev/application: other}}
      spec:
        containers: [{name: spark-kubernetes-driver, image: x, lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}}]
`
	for _, inj := range []app.Injection{app.InjectTemplate, app.InjectWebhook} {
		m, items := build(t, doc, inj)
		before := str(t, items[0])
		c := m.Apps[0].Carrier
		if changed, err := OtherInjectionPlan(c).Apply(c); changed || err != nil {
			t.Errorf("%v: Apply = %v, %v; want no change", inj, changed, err)
		}
		if got := str(t, items[0]); got != before {
			t.Errorf("%v: the plan changed the object:\n%s\nwant\n%s", inj, got, before)
		}
	}
}

// TestApplyLeavesAppFacts: transform writes objects, never the model: after Apply with a route
// (new UI Service, RBAC, HTTPRoute, proxy settings in the conf) and on its own output (every
// object then exists and is brought back in place), the App's fields sparkui used to set
// (UIService, Role, RoleBinding, Routes, ExtraRoutes, Props, the carrier's Conf) are what
// the build read.
func TestApplyLeavesAppFacts(t *testing.T) {
	const doc = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  sparkConf: {spark.ui.proxyBase: /mine}
  driver: {cores: 1}
`
	o := Options{ServiceEnabled: true, ServiceType: "ClusterIP", RuntimeImage: "r:1", CreateRBAC: true,
		Route: RouteOptions{Kind: RouteHTTPRoute, PathPrefix: "/spark/{namespace}/{name}",
			ParentRefs: []ParentRef{{Name: "gw"}}}}
	fresh, _ := build(t, doc, app.InjectTemplate)
	m, _ := build(t, doc, app.InjectTemplate)
	items, _ := Apply(m, o)
	for run, m := range []*app.Model{fresh, app.BuildWith(items, app.CarrierOptions{})} {
		a := m.Apps[0]
		type facts struct {
			svc, role, rb *yaml.RNode
			routes        map[string]*yaml.RNode
			extra         []*yaml.RNode
			props, conf   map[string]string
		}
		snap := func() facts {
			return facts{a.UIService, a.Role, a.RoleBinding, maps.Clone(a.Routes), slices.Clone(a.ExtraRoutes),
				maps.Clone(a.Props), maps.Clone(a.Carrier.Conf)}
		}
		before := snap()
		out, notes := Apply(m, o)
		for _, n := range notes {
			if n.Error {
				t.Fatalf("run %d: %s", run, n.Msg)
			}
		}
		if run == 0 && len(out) != 5 {
			t.Fatalf("run 0: %d items, want the carrier, a Service, a Role, a RoleBinding and an HTTPRoute", len(out))
		}
		if after := snap(); !reflect.DeepEqual(after, before) {
			t.Errorf("run %d: Apply changed the App:\n%+v\nwant\n%+v", run, after, before)
		}
	}
}

// TestInjectionPlan: what sparkui writes into a carrier, read from the plan: on a kubeflow
// template injection the webhook injection's copies go first, then the identity label (set,
// as sparkui owns it there), the runtime container and volume, the driver's mount and the
// withdraw hook unless a preStop of the user's is there; the auth volume and mount go when no
// credential is configured. On a spark-submit Pod Spark owns the label: set only if absent.
func TestInjectionPlan(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		want []string
	}{
		"kubeflow": {`apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  driver: {cores: 1}
`, []string{
			"remove spec.driver.initContainers [sparkui-runtime]",
			"remove spec.volumes [sparkui-runtime sparkui-runtime-auth]",
			"remove spec.driver.volumeMounts [sparkui-runtime sparkui-runtime-auth]",
			"remove spec.driver.lifecycle.preStop if sparkui's preStop",
			`remove spec.driver.labels["sparkui.dev/application"] if equal = pi`,
			"set slot podLabels sparkui.dev/application = pi",
			"upsert slot initContainers sparkui-runtime",
			"upsert slot volumes sparkui-runtime",
			"remove spec.driver.template.spec.volumes [sparkui-runtime-auth]",
			"upsert slot driverContainer.volumeMounts sparkui-runtime",
			"remove spec.driver.template.spec.containers[0].volumeMounts [sparkui-runtime-auth]",
			"set slot driverContainer.lifecycle preStop if sparkui's preStop = {…}",
		}},
		"pod": {`apiVersion: v1
kind: Pod
metadata: {name: d-driver, namespace: ns, labels: {spark-role: driver, spark-app-selector: spark-1}}
spec:
  containers: [{name: spark-kubernetes-driver}]
`, []string{
			"set slot podLabels spark-app-selector if absent = spark-1",
			"upsert slot initContainers sparkui-runtime",
			"upsert slot volumes sparkui-runtime",
			"remove spec.volumes [sparkui-runtime-auth]",
			"upsert slot driverContainer.volumeMounts sparkui-runtime",
			"remove spec.containers[0].volumeMounts [sparkui-runtime-auth]",
			"set slot driverContainer.lifecycle preStop if sparkui's preStop = {…}",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			m, _ := build(t, tc.doc, app.InjectTemplate)
			prepare(t, m.Apps[0])
			got := InjectionPlan(m.Apps[0], Options{RuntimeImage: "r:1"}).Strings()
			if !slices.Equal(got, tc.want) {
				t.Errorf("InjectionPlan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
