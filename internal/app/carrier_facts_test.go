package app

import (
	"testing"
)

func TestCarrierSettingsAndHistoryServer(t *testing.T) {
	doc := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: hs}\n" +
		"spec: {mainClass: org.apache.spark.deploy.history.HistoryServer, sparkConf: {spark.ui.port: \"18080\", spark.port.maxRetries: \"2\"}}\n"
	c := detectOne(t, readObjects(t, doc), CarrierOptions{})
	if !c.IsHistoryServer() {
		t.Error("IsHistoryServer = false")
	}
	s, errs := c.Settings()
	if len(errs) != 0 || s.UIPort != 18080 || s.MaxRetries != 2 || !s.UIEnabled {
		t.Errorf("Settings = %+v, %v", s, errs)
	}
	if detectOne(t, fixture(t, "kubeflow-sparkapplication.yaml"), CarrierOptions{}).IsHistoryServer() {
		t.Error("SparkPi is no History Server")
	}
}

func TestTemplateInjectionRefused(t *testing.T) {
	tests := []struct {
		version string
		route   Injection
		want    bool
	}{
		{"2.4.0", InjectTemplate, true},
		{"v2.4.8", InjectTemplate, true},
		{"3.0.0", InjectTemplate, false},
		{"4.0.1", InjectTemplate, false},
		{"2.4.0", InjectWebhook, false},
		{"", InjectTemplate, false},
		{"latest", InjectTemplate, false},
	}
	for _, tc := range tests {
		doc := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec: {sparkVersion: \"" + tc.version + "\"}\n"
		c := detectOne(t, readObjects(t, doc), CarrierOptions{KubeflowInjection: tc.route})
		if got := c.TemplateInjectionRefused(); got != tc.want {
			t.Errorf("sparkVersion %q on the %s route: TemplateInjectionRefused = %t, want %t", tc.version, tc.route, got, tc.want)
		}
	}
	if detectOne(t, fixture(t, "apache-v1.yaml"), CarrierOptions{}).TemplateInjectionRefused() {
		t.Error("an Apache carrier has no kubeflow template injection")
	}
}

// TestHostNetworkSources: kubeflow's driver.hostNetwork (applied by the webhook) and a
// template's hostNetwork (kept by Spark) both put the driver on the host network.
func TestHostNetworkSources(t *testing.T) {
	tests := []struct {
		name, doc string
		want      bool
	}{
		{"kubeflow driver field", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec: {driver: {hostNetwork: true}}\n", true},
		{"kubeflow template", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec: {driver: {template: {spec: {hostNetwork: true}}}}\n", true},
		{"kubeflow neither", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec: {driver: {hostNetwork: false}}\n", false},
		{"apache template", "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: a}\nspec: {driverSpec: {podTemplateSpec: {spec: {hostNetwork: true}}}}\n", true},
		{"apache none", "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: a}\nspec: {}\n", false},
	}
	for _, tc := range tests {
		c := detectOne(t, readObjects(t, tc.doc), CarrierOptions{})
		if c.HostNetwork != tc.want {
			t.Errorf("%s: HostNetwork = %t, want %t", tc.name, c.HostNetwork, tc.want)
		}
	}
}

// TestUserLifecycle: kubeflow's driver.lifecycle is reported on both routes (the webhook
// applies it whenever it is installed).
func TestUserLifecycle(t *testing.T) {
	const kf = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\n"
	const ssa = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: a}\n"
	tests := []struct {
		doc   string
		route Injection
		want  string
	}{
		{kf + "spec: {driver: {lifecycle: {preStop: {exec: {command: [x]}}}}}\n", InjectTemplate, "spec.driver.lifecycle"},
		{kf + "spec: {driver: {lifecycle: {preStop: {exec: {command: [x]}}}}}\n", InjectWebhook, "spec.driver.lifecycle"},
		{ssa + "spec: {template: {driver: {lifecycle: {}}}}\n", InjectTemplate, "spec.template.driver.lifecycle"},
		{kf + "spec: {driver: {lifecycle: null}}\n", InjectWebhook, ""},
		{kf + "spec: {driver: {}}\n", InjectTemplate, ""},
	}
	for _, tc := range tests {
		c := detectOne(t, readObjects(t, tc.doc), CarrierOptions{KubeflowInjection: tc.route})
		if c.UserLifecyclePath != tc.want {
			t.Errorf("%s on the %s route: UserLifecyclePath = %q, want %q", tc.doc, tc.route, c.UserLifecyclePath, tc.want)
		}
	}
}
