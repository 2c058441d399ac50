package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

func TestSubmitArgs(t *testing.T) {
	tests := []struct {
		name      string
		tokens    []string
		conf      map[string]string
		mainClass string
		propsFile string
	}{
		{"forms", []string{"spark-submit", "--conf", "a=1", "--conf=b=2", "-c", "c=x=y", "--name", "n", "--deploy-mode=client"},
			map[string]string{"a": "1", "b": "2", "c": "x=y", "spark.app.name": "n", "spark.submit.deployMode": "client"}, "", ""},
		{"later wins", []string{"--conf", "a=1", "--conf", "a=2"}, map[string]string{"a": "2"}, "", ""},
		{"dangling flag", []string{"--verbose", "--conf"}, map[string]string{}, "", ""},
		{"conf without value", []string{"--conf", "novalue", "--class", "Main"}, map[string]string{}, "Main", ""},
		{"properties file", []string{"--properties-file", "/etc/spark/app.conf"}, map[string]string{}, "", "/etc/spark/app.conf"},
		{"history server", []string{"/opt/spark/sbin/start-history-server.sh"}, map[string]string{}, HistoryServerClass, ""},
		{"history server class", []string{"spark-class", HistoryServerClass}, map[string]string{}, HistoryServerClass, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctr := yamlx.NewMap("name", "c", "args", tc.tokens)
			c := &Carrier{Object: yaml.NewRNode(yamlx.NewMap()), Kind: KindWorkload}
			got, err := c.readSubmitArgs(ctr, "spec.template.spec.containers[0]")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.conf, got.conf); diff != "" {
				t.Errorf("conf (-want +got):\n%s", diff)
			}
			if got.mainClass != tc.mainClass || got.propertiesFile != tc.propsFile {
				t.Errorf("mainClass %q, propertiesFile %q; want %q, %q", got.mainClass, got.propertiesFile, tc.mainClass, tc.propsFile)
			}
		})
	}
}

// TestWorkloadConfFile covers the ways a properties file reaches the driver container.
func TestWorkloadConfFile(t *testing.T) {
	cm := `apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: ns}
data:
  spark-defaults.conf: "spark.ui.port 4100"
  app.conf: "spark.ui.port=4200"
  broken: "spark.ui.port=\\u12"
`
	job := func(ctr, vols string) string {
		return cm + "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  template:\n" +
			"    metadata: {labels: {spark-role: driver}}\n    spec:\n      containers:\n      - " + ctr + "\n      volumes:\n      - " + vols + "\n"
	}
	tests := []struct {
		name, doc, port, file, confErr string
	}{
		{"default dir", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf/}]}", "{name: v, configMap: {name: conf}}"),
			"4100", "conf/spark-defaults.conf", ""},
		{"subPath", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf/spark-defaults.conf, subPath: app.conf}]}", "{name: v, configMap: {name: conf}}"),
			"4200", "conf/app.conf", ""},
		{"items rename", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf}]}", "{name: v, configMap: {name: conf, items: [{key: app.conf, path: spark-defaults.conf}]}}"),
			"4200", "conf/app.conf", ""},
		{"properties-file", job("{name: d, args: [--properties-file, /etc/app/app.conf], volumeMounts: [{name: v, mountPath: /etc/app}]}", "{name: v, configMap: {name: conf}}"),
			"4200", "conf/app.conf", ""},
		{"other dir", job("{name: d, volumeMounts: [{name: v, mountPath: /etc/app}]}", "{name: v, configMap: {name: conf}}"),
			"fn", "", ""},
		{"not a ConfigMap", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf}]}", "{name: v, emptyDir: {}}"),
			"fn", "", ""},
		{"ConfigMap not in the input", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf}]}", "{name: v, configMap: {name: elsewhere}}"),
			"fn", "", ""},
		{"unreadable", job("{name: d, volumeMounts: [{name: v, mountPath: /opt/spark/conf/spark-defaults.conf, subPath: broken}]}", "{name: v, configMap: {name: conf}}"),
			"fn", "conf/broken", "ConfigMap conf/broken: line 1: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, tc.doc)
			c := detectOne(t, objs, CarrierOptions{SparkConf: map[string]string{"spark.ui.port": "fn"}, ConfigMap: configMapsOf(objs)})
			if c.Conf["spark.ui.port"] != tc.port || c.ConfFile != tc.file {
				t.Errorf("spark.ui.port = %q from %q, want %q from %q", c.Conf["spark.ui.port"], c.ConfFile, tc.port, tc.file)
			}
			switch {
			case tc.confErr == "" && c.ConfError != nil:
				t.Errorf("ConfError = %q", c.ConfError.Msg)
			case tc.confErr != "" && (c.ConfError == nil || !strings.HasPrefix(c.ConfError.Msg, tc.confErr)):
				t.Errorf("ConfError = %v, want prefix %q", c.ConfError, tc.confErr)
			}
		})
	}
}

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
