package app

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDetectSparkConnect: the facts of kubeflow's SparkConnect fixture, with the operator's
// own --conf (driver and block-manager ports, the server Pod's name) over the user's
// sparkConf, and the profile's columns for it.
func TestDetectSparkConnect(t *testing.T) {
	objs := fixture(t, "kubeflow-sparkconnect.yaml")
	// The user's settings of what the operator passes after sparkConf are overridden.
	sc := objs[0]
	conf := sc.Field("spec").Value.Field("sparkConf").Value
	conf.YNode().Content = append(conf.YNode().Content, readObjects(t, "spark.driver.port: \"7000\"\nspark.kubernetes.driver.pod.name: mine\n")[0].YNode().Content...)
	c := detectOne(t, objs, CarrierOptions{KubeflowInjection: InjectWebhook, SparkConf: map[string]string{"spark.ui.port": "4999"}})
	want := facts{
		Kind: KindWorkload, Injection: InjectTemplate, Name: "spark-connect", Namespace: "analytics",
		Conf: map[string]string{
			"spark.ui.port":                    "4041",
			"spark.driver.port":                "7078",
			"spark.driver.blockManager.port":   "7079",
			"spark.kubernetes.driver.pod.name": "spark-connect-server",
			"spark.submit.deployMode":          "client",
		},
		ConfPath:       "spec.sparkConf",
		ServiceAccount: "spark-connect", ServiceAccountPath: "spec.server.template.spec.serviceAccountName",
		DeployMode: "client", MainClass: ConnectServerClass,
		SparkVersion: "4.0.1", DriverPodName: "spark-connect-server", Replicas: 1,
		Prefix: "spark-connect-sparkui", Identity: map[string]string{"sparkui.dev/application": "spark-connect"},
		PathPrefix: "spec.server.template.spec",
	}
	if diff := cmp.Diff(want, factsOf(c)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if got := c.DriverRole(); got != "connect-server" {
		t.Errorf("DriverRole = %q", got)
	}
	if !c.OperatorOwnsLifecycle() || !c.OperatorFillsContainer() || c.PinsDriverContainer() || c.SparkOwnsIdentityLabel() {
		t.Errorf("lifecycle %v, fills container %v, pins %v, Spark identity %v; want true, true, false, false",
			c.OperatorOwnsLifecycle(), c.OperatorFillsContainer(), c.PinsDriverContainer(), c.SparkOwnsIdentityLabel())
	}
	if got := c.OperatorServices(); len(got) != 1 || got["spark-connect-server"] == "" {
		t.Errorf("OperatorServices = %v", got)
	}
	if c.OtherInjection() != nil || c.TemplateInjectionRefused() {
		t.Error("a SparkConnect has no kubeflow injections")
	}
}

// TestSparkConnectServices: the server Service is spec.server.service's name when that is
// set (util.go GetServerServiceName), none when it has no name (the operator cannot create
// it), else <name>-server.
func TestSparkConnectServices(t *testing.T) {
	const head = "apiVersion: sparkoperator.k8s.io/v1alpha1\nkind: SparkConnect\nmetadata: {name: sc, namespace: ns}\n"
	for doc, want := range map[string]string{
		head + "spec: {sparkVersion: 4.0.1}\n":                                                  "sc-server",
		head + "spec: {server: {service: {metadata: {name: front}}}}\n":                         "front",
		head + "spec: {server: {service: {spec: {type: ClusterIP}}}}\n":                         "",
		head + "spec: {server: {service: null, template: {spec: {containers: [{name: a}]}}}}\n": "sc-server",
	} {
		c, err := DetectCarrier(readObjects(t, doc)[0], CarrierOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for name := range c.OperatorServices() {
			got = name
		}
		if got != want || len(c.OperatorServices()) > 1 {
			t.Errorf("%s: OperatorServices = %v, want %q", doc, c.OperatorServices(), want)
		}
	}
}

func TestSparkConnectShapeErrors(t *testing.T) {
	const head = "apiVersion: sparkoperator.k8s.io/v1alpha1\nkind: SparkConnect\nmetadata: {name: sc, namespace: ns}\n"
	for doc, want := range map[string]string{
		head + "spec: {sparkConf: [a]}\n":                                                                     `SparkConnect ns/sc: spec.sparkConf: is a list, want a mapping`,
		head + "spec: {server: oops}\n":                                                                       `SparkConnect ns/sc: spec.server: is the scalar "oops", want a mapping`,
		head + "spec: {server: {template: [a]}}\n":                                                            `SparkConnect ns/sc: spec.server.template: is a list, want a mapping`,
		head + "spec: {server: {template: {spec: {containers: {name: a}}}}}\n":                                `SparkConnect ns/sc: spec.server.template.spec.containers: is a mapping, want a list`,
		head + "spec: {server: {template: {metadata: {labels: [a]}}}}\n":                                      `SparkConnect ns/sc: spec.server.template.metadata.labels: is a list, want a mapping`,
		head + "spec: {server: {template: {spec: {serviceAccountName: [a]}}}}\n":                              `SparkConnect ns/sc: spec.server.template.spec.serviceAccountName: is a list, want a scalar`,
		head + "spec: {server: {service: x}}\n":                                                               `SparkConnect ns/sc: spec.server.service: is the scalar "x", want a mapping`,
		head + "spec: {server: {service: {metadata: {name: {a: b}}}}}\n":                                      `SparkConnect ns/sc: spec.server.service.metadata.name: is a mapping, want a scalar`,
		head + "spec: {sparkVersion: [4]}\n":                                                                  `SparkConnect ns/sc: spec.sparkVersion: is a list, want a scalar`,
		head + "spec: {server: {template: {spec: {containers: [{name: a, ports: [{containerPort: x}]}]}}}}\n": `SparkConnect ns/sc: spec.server.template.spec.containers[0].ports[0].containerPort: is the scalar "x", want an integer`,
	} {
		c, err := DetectCarrier(readObjects(t, doc)[0], CarrierOptions{})
		var se *ShapeError
		if c != nil || !errors.As(err, &se) {
			t.Errorf("%s: DetectCarrier = %v, %v; want a *ShapeError", doc, c, err)
			continue
		}
		if err.Error() != want {
			t.Errorf("%s: error\n got %s\nwant %s", doc, err, want)
		}
	}
}

// TestSparkConnectModel: the application built from a SparkConnect tells the runtime to
// select the server Pod by its real role and to skip the operator's RPC, block-manager and
// Connect ports; a UI Service name never takes the operator's server Service's, even when
// that is spec.server.service's name and another SparkConnect's.
func TestSparkConnectModel(t *testing.T) {
	const doc = `apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: a, namespace: ns}
spec: {sparkVersion: 4.0.1}
---
apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: b, namespace: ns}
spec: {sparkVersion: 4.0.1, server: {service: {metadata: {name: a-sparkui-ui-svc}}}}
`
	m := BuildWith(readObjects(t, doc), CarrierOptions{})
	if len(m.Apps) != 2 || len(m.CarrierErrors) != 0 {
		t.Fatalf("%d apps, carrier errors %v", len(m.Apps), m.CarrierErrors)
	}
	a := m.Apps[0]
	cfg := a.RuntimeConfig("")
	if cfg.PodSelector != "sparkui.dev/application=a,spark-role=connect-server" || cfg.SkipPorts != "7078,7079,15002" {
		t.Errorf("selector %q, skip ports %q", cfg.PodSelector, cfg.SkipPorts)
	}
	if a.UIServiceName == "a-sparkui-ui-svc" || a.UIServiceName == "a-server" || a.UIServiceName == "b-server" {
		t.Errorf("UI Service %q takes an operator's name", a.UIServiceName)
	}
	if got := m.Apps[1].UIServiceName; got != "b-sparkui-ui-svc" {
		t.Errorf("b's UI Service %q", got)
	}
	if m.OperatorServices["ns"]["a-server"] == "" || m.OperatorServices["ns"]["a-sparkui-ui-svc"] == "" || m.OperatorServices["ns"]["b-server"] != "" {
		t.Errorf("OperatorServices = %v", m.OperatorServices)
	}
}

// TestOtherCarriersDriverRole: every other carrier's driver Pod is Spark's spark-role=driver
// and keeps the withdraw hook sparkui writes; of them only a kubeflow SparkApplication has an
// operator Service known at build time.
func TestOtherCarriersDriverRole(t *testing.T) {
	for _, f := range []string{"kubeflow-sparkapplication.yaml", "kubeflow-scheduled.yaml", "apache-v1.yaml", "apache-v1beta1.yaml",
		"connect-deployment.yaml", "notebook-statefulset.yaml", "driver-job.yaml", "driver-cronjob.yaml"} {
		objs := fixture(t, f)
		c := detectOne(t, objs, CarrierOptions{ConfigMap: configMapsOf(objs)})
		wantSvc := map[string]bool{"kubeflow-sparkapplication.yaml": true}[f]
		if c.DriverRole() != "driver" || c.OperatorOwnsLifecycle() || (len(c.OperatorServices()) == 1) != wantSvc {
			t.Errorf("%s: role %q, lifecycle %v, operator Services %v", f, c.DriverRole(), c.OperatorOwnsLifecycle(), c.OperatorServices())
		}
	}
	c, err := DetectCarrier(readObjects(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: d, labels: {spark-role: driver}}\nspec: {containers: [{name: c}]}\n")[0], CarrierOptions{})
	if err != nil || c.DriverRole() != "driver" || c.OperatorOwnsLifecycle() || c.OperatorServices() != nil {
		t.Errorf("Pod: %v, %v", c, err)
	}
}
