package app

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// readObjects reads a fixture (or inline YAML) into objects.
func readObjects(t *testing.T, src string) []*yaml.RNode {
	t.Helper()
	objs, err := kio.FromBytes([]byte(src))
	if err != nil {
		t.Fatalf("parsing: %v", err)
	}
	return objs
}

func fixture(t *testing.T, name string) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile("../../testdata/assets/carriers/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return readObjects(t, string(b))
}

// configMapsOf is the ConfigMap lookup Build's index would give.
func configMapsOf(objs []*yaml.RNode) func(ns, name string) *yaml.RNode {
	return func(ns, name string) *yaml.RNode {
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
		return nil
	}
}

// detectOne detects the carriers among objs and insists on exactly one.
func detectOne(t *testing.T, objs []*yaml.RNode, opts CarrierOptions) *Carrier {
	t.Helper()
	var found []*Carrier
	for _, o := range objs {
		c, err := DetectCarrier(o, opts)
		if err != nil {
			t.Fatalf("DetectCarrier(%s %s): %v", o.GetKind(), o.GetName(), err)
		}
		if c != nil {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("found %d carriers, want 1", len(found))
	}
	return found[0]
}

// facts is what a test compares: every fact a carrier reads, plus its derived names.
type facts struct {
	Kind                               CarrierKind
	Injection                          Injection
	Name, Namespace                    string
	Conf                               map[string]string
	ConfPath, ConfFile                 string
	ServiceAccount, ServiceAccountPath string
	IPFamilyPolicy                     string
	IPFamilies                         []string
	HostNetwork                        bool
	DeployMode, MainClass              string
	SparkVersion, DriverPodName        string
	Replicas                           int
	ReplicasPath, Strategy             string
	ConcurrencyPolicy                  string
	Prefix                             string
	Identity                           map[string]string
	PathPrefix                         string
}

func factsOf(c *Carrier) facts {
	return facts{
		Kind: c.Kind, Injection: c.Injection, Name: c.Name, Namespace: c.Namespace,
		Conf: c.Conf, ConfPath: c.ConfPath, ConfFile: c.ConfFile,
		ServiceAccount: c.ServiceAccount, ServiceAccountPath: c.ServiceAccountPath,
		IPFamilyPolicy: c.IPFamilyPolicy, IPFamilies: c.IPFamilies, HostNetwork: c.HostNetwork,
		DeployMode: c.DeployMode, MainClass: c.MainClass, SparkVersion: c.SparkVersion,
		DriverPodName: c.DriverPodName, Replicas: c.Replicas, ReplicasPath: c.ReplicasPath,
		Strategy: c.Strategy, ConcurrencyPolicy: c.ConcurrencyPolicy,
		Prefix: c.Prefix(), Identity: c.IdentityLabels(), PathPrefix: c.PathPrefix(),
	}
}

func TestDetectCarrierFixtures(t *testing.T) {
	fnConf := map[string]string{"spark.ui.port": "4999", "spark.ssl.enabled": "false"}
	tests := []struct {
		file  string
		route Injection
		want  facts
	}{{
		file: "kubeflow-sparkapplication.yaml",
		want: facts{
			Kind: KindKubeflow, Injection: InjectTemplate, Name: "pi-estimate", Namespace: "analytics",
			Conf: map[string]string{
				"spark.ui.port": "4045",
				"spark.kubernetes.driver.service.ipFamilyPolicy": "PreferDualStack",
				"spark.kubernetes.driver.service.ipFamilies":     "IPv6,IPv4",
			},
			ConfPath:       "spec.sparkConf",
			ServiceAccount: "pi-driver", ServiceAccountPath: "spec.driver.serviceAccount",
			IPFamilyPolicy: "PreferDualStack", IPFamilies: []string{"IPv6", "IPv4"},
			DeployMode: "cluster", MainClass: "org.apache.spark.examples.SparkPi",
			SparkVersion: "3.5.5", DriverPodName: "pi-estimate-driver", Replicas: 1,
			Prefix: "pi-estimate-sparkui", Identity: map[string]string{"sparkui.dev/application": "pi-estimate"},
			PathPrefix: "spec.driver.template.spec",
		},
	}, {
		file: "kubeflow-sparkapplication.yaml", route: InjectWebhook,
		want: facts{
			Kind: KindKubeflow, Injection: InjectWebhook, Name: "pi-estimate", Namespace: "analytics",
			Conf: map[string]string{
				"spark.ui.port": "4045",
				"spark.kubernetes.driver.service.ipFamilyPolicy": "PreferDualStack",
				"spark.kubernetes.driver.service.ipFamilies":     "IPv6,IPv4",
			},
			ConfPath:       "spec.sparkConf",
			ServiceAccount: "pi-driver", ServiceAccountPath: "spec.driver.serviceAccount",
			IPFamilyPolicy: "PreferDualStack", IPFamilies: []string{"IPv6", "IPv4"},
			DeployMode: "cluster", MainClass: "org.apache.spark.examples.SparkPi",
			SparkVersion: "3.5.5", DriverPodName: "pi-estimate-driver", Replicas: 1,
			Prefix: "pi-estimate-sparkui", Identity: map[string]string{"sparkui.dev/application": "pi-estimate"},
			PathPrefix: "spec.driver",
		},
	}, {
		file: "kubeflow-scheduled.yaml",
		want: facts{
			Kind: KindKubeflow, Name: "nightly-pi", Namespace: "analytics",
			Conf: map[string]string{}, ConfPath: "spec.template.sparkConf",
			ServiceAccount: "nightly-driver", ServiceAccountPath: "spec.template.driver.serviceAccount",
			DeployMode: "cluster", SparkVersion: "3.5.5", Replicas: 1, ConcurrencyPolicy: "Forbid",
			Prefix: "nightly-pi-sparkui", Identity: map[string]string{"sparkui.dev/application": "nightly-pi"},
			PathPrefix: "spec.template.driver.template.spec",
		},
	}, {
		file: "apache-v1.yaml",
		want: facts{
			Kind: KindApache, Name: "pi-autoscaled", Namespace: "analytics",
			Conf: map[string]string{
				"spark.dynamicAllocation.enabled":                         "true",
				"spark.dynamicAllocation.shuffleTracking.enabled":         "true",
				"spark.dynamicAllocation.maxExecutors":                    "4",
				"spark.kubernetes.authenticate.driver.serviceAccountName": "pi-runner",
				"spark.kubernetes.container.image":                        "apache/spark:{{SPARK_VERSION}}-scala",
			},
			ConfPath:       "spec.sparkConf",
			ServiceAccount: "pi-runner", ServiceAccountPath: `spec.sparkConf["spark.kubernetes.authenticate.driver.serviceAccountName"]`,
			DeployMode: "cluster", MainClass: "org.apache.spark.examples.SparkPi", SparkVersion: "4.1.1",
			Replicas: 1, Prefix: "pi-autoscaled-sparkui",
			Identity:   map[string]string{"sparkui.dev/application": "pi-autoscaled"},
			PathPrefix: "spec.driverSpec.podTemplateSpec.spec",
		},
	}, {
		file: "apache-v1-template.yaml",
		want: facts{
			Kind: KindApache, Name: "pi-templated", Namespace: "analytics",
			Conf: map[string]string{
				"spark.kubernetes.container.image": "apache/spark:{{SPARK_VERSION}}-scala",
				"spark.ui.port":                    "4050",
			},
			ConfPath:       "spec.sparkConf",
			ServiceAccount: "templated-driver", ServiceAccountPath: "spec.driverSpec.podTemplateSpec.spec.serviceAccountName",
			DeployMode: "cluster", MainClass: "org.apache.spark.examples.SparkPi", SparkVersion: "4.2.0",
			Replicas: 1, Prefix: "pi-templated-sparkui",
			Identity:   map[string]string{"sparkui.dev/application": "pi-templated"},
			PathPrefix: "spec.driverSpec.podTemplateSpec.spec",
		},
	}, {
		file: "apache-v1beta1.yaml",
		want: facts{
			Kind: KindApache, Name: "pi-legacy", Namespace: "analytics",
			Conf: map[string]string{
				"spark.kubernetes.authenticate.driver.serviceAccountName": "legacy-runner",
				"spark.kubernetes.container.image":                        "apache/spark:{{SPARK_VERSION}}-scala",
			},
			ConfPath:       "spec.sparkConf",
			ServiceAccount: "legacy-runner", ServiceAccountPath: `spec.sparkConf["spark.kubernetes.authenticate.driver.serviceAccountName"]`,
			DeployMode: "cluster", MainClass: "org.apache.spark.examples.SparkPi", SparkVersion: "4.0.1",
			Replicas: 1, Prefix: "pi-legacy-sparkui",
			Identity:   map[string]string{"sparkui.dev/application": "pi-legacy"},
			PathPrefix: "spec.driverSpec.podTemplateSpec.spec",
		},
	}, {
		// The properties file overrides the functionConfig; the notebook runs in client mode.
		file: "notebook-statefulset.yaml",
		want: facts{
			Kind: KindWorkload, Name: "lab", Namespace: "notebooks",
			Conf: map[string]string{
				"spark.ui.port": "4041", "spark.ssl.enabled": "false",
				"spark.submit.deployMode": "client", "spark.driver.host": "lab-0.lab.notebooks.svc",
				"spark.port.maxRetries": "4",
			},
			ConfFile:       "notebook-spark-conf/spark-defaults.conf",
			ServiceAccount: "lab-spark", ServiceAccountPath: "spec.template.spec.serviceAccountName",
			DeployMode: "client", Replicas: 1, ReplicasPath: "spec.replicas",
			Prefix: "lab-sparkui", Identity: map[string]string{"sparkui.dev/application": "lab"},
			PathPrefix: "spec.template.spec",
		},
	}, {
		// Command-line flags override the functionConfig.
		file: "connect-deployment.yaml",
		want: facts{
			Kind: KindWorkload, Name: "spark-connect", Namespace: "platform",
			Conf: map[string]string{
				"spark.ui.port": "0", "spark.ssl.enabled": "false",
				"spark.master": "k8s://https://kubernetes.default.svc",
				"spark.kubernetes.driver.service.ipFamilies": "IPv4",
				"spark.connect.grpc.binding.port":            "15002",
				"spark.kubernetes.driver.pod.name":           "$(POD_NAME)",
				"spark.submit.deployMode":                    "client", // spark-submit's default
			},
			ServiceAccount: "spark-connect", ServiceAccountPath: "spec.template.spec.serviceAccountName",
			IPFamilies: []string{"IPv4"}, HostNetwork: true,
			DeployMode: "client", Replicas: 1, ReplicasPath: "spec.replicas", Strategy: "Recreate",
			Prefix: "spark-connect-sparkui", Identity: map[string]string{"sparkui.dev/application": "spark-connect"},
			PathPrefix: "spec.template.spec",
		},
	}, {
		file: "driver-job.yaml",
		want: facts{
			Kind: KindWorkload, Name: "daily-report", Namespace: "reports",
			Conf: map[string]string{
				"spark.ui.port": "4060", "spark.ssl.enabled": "false", "spark.master": "local[2]",
				"spark.submit.deployMode": "client", // spark-submit's default
			},
			ServiceAccount: "reports", ServiceAccountPath: "spec.template.spec.serviceAccountName",
			DeployMode: "client", MainClass: "com.example.DailyReport",
			Replicas: 1, ReplicasPath: "spec.parallelism",
			Prefix: "daily-report-sparkui", Identity: map[string]string{"sparkui.dev/application": "daily-report"},
			PathPrefix: "spec.template.spec",
		},
	}, {
		file: "driver-cronjob.yaml",
		want: facts{
			Kind: KindWorkload, Name: "nightly-report", Namespace: "reports",
			Conf: map[string]string{
				"spark.ui.port": "4999", "spark.ssl.enabled": "false", "spark.master": "local[2]",
				"spark.submit.deployMode": "client",
			},
			DeployMode: "client", MainClass: "com.example.NightlyReport",
			Replicas: 1, ReplicasPath: "spec.jobTemplate.spec.parallelism", ConcurrencyPolicy: "Allow",
			Prefix: "nightly-report-sparkui", Identity: map[string]string{"sparkui.dev/application": "nightly-report"},
			PathPrefix: "spec.jobTemplate.spec.template.spec",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.file+"/"+tc.route.String(), func(t *testing.T) {
			objs := fixture(t, tc.file)
			c := detectOne(t, objs, CarrierOptions{KubeflowInjection: tc.route, SparkConf: fnConf, ConfigMap: configMapsOf(objs)})
			if diff := cmp.Diff(tc.want, factsOf(c)); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
			if c.ConfError != nil {
				t.Errorf("ConfError = %v", c.ConfError)
			}
		})
	}
}

// TestDetectDoesNotWriteFunctionConfig: the workload's conf is a copy, so detecting
// one carrier cannot leak its properties into the next one's base conf.
func TestDetectDoesNotWriteFunctionConfig(t *testing.T) {
	fnConf := map[string]string{"spark.ui.port": "4999"}
	objs := fixture(t, "driver-job.yaml")
	detectOne(t, objs, CarrierOptions{SparkConf: fnConf})
	if diff := cmp.Diff(map[string]string{"spark.ui.port": "4999"}, fnConf); diff != "" {
		t.Errorf("functionConfig conf changed (-want +got):\n%s", diff)
	}
}

func TestNotCarriers(t *testing.T) {
	docs := map[string]string{
		"configmap":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n",
		"plain pod":  "apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: {app: web}}\nspec: {containers: [{name: c}]}\n",
		"executor":   "apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: {spark-role: executor}}\nspec: {containers: [{name: c}]}\n",
		"odd labels": "apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: [spark-role]}\nspec: {}\n",
		"web deployment": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n" +
			"spec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}\n",
		"deployment with string template": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: oops}\n",
		"daemonset driver": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n" +
			"spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c}]}}}\n",
		"job in extensions": "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: d}\n" +
			"spec: {jobTemplate: {spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c}]}}}}}\n",
		"kubeflow v1beta1": "apiVersion: sparkoperator.k8s.io/v1beta1\nkind: SparkApplication\nmetadata: {name: x}\nspec: {sparkConf: []}\n",
		"apache connect":   "apiVersion: spark.apache.org/v1\nkind: SparkCluster\nmetadata: {name: x}\nspec: {}\n",
		"local config": "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\n" +
			"metadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\nspec: {sparkConf: []}\n",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			for _, o := range readObjects(t, doc) {
				c, err := DetectCarrier(o, CarrierOptions{})
				if c != nil || err != nil {
					t.Errorf("DetectCarrier = %v, %v; want nil, nil", c, err)
				}
			}
		})
	}
	if c, err := DetectCarrier(nil, CarrierOptions{}); c != nil || err != nil {
		t.Errorf("DetectCarrier(nil) = %v, %v", c, err)
	}
}

func TestPodCarrier(t *testing.T) {
	doc := `apiVersion: v1
kind: Pod
metadata:
  name: etl-1a2b-driver
  namespace: jobs
  labels: {spark-role: driver, spark-app-selector: spark-0123abcd}
spec:
  serviceAccount: etl
  hostNetwork: true
  containers:
  - name: spark-kubernetes-driver
`
	c := detectOne(t, readObjects(t, doc), CarrierOptions{})
	want := facts{
		Kind: KindPod, Name: "etl-1a2b-driver", Namespace: "jobs", Conf: map[string]string{},
		ServiceAccount: "etl", ServiceAccountPath: "spec.serviceAccount", HostNetwork: true,
		DeployMode: "cluster", DriverPodName: "etl-1a2b-driver", Replicas: 1,
		Prefix: "etl-1a2b", Identity: map[string]string{"spark-app-selector": "spark-0123abcd"},
		PathPrefix: "spec",
	}
	if diff := cmp.Diff(want, factsOf(c)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	n, path, err := c.Lookup(SlotDriverContainer)
	if err != nil || path != "spec.containers[0]" || yamlx.GetStr(n, "name") != "spark-kubernetes-driver" {
		t.Errorf("Lookup(SlotDriverContainer) = %v, %q, %v", n, path, err)
	}
}

// TestServiceAccountPrecedence checks the order the operators really apply: kubeflow's
// driver.serviceAccount, then the sparkConf key, then the template; Apache's conf over the
// template.
func TestServiceAccountPrecedence(t *testing.T) {
	kf := func(driverSA, confSA, tmplSA string) string {
		d := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec:\n  sparkConf: {"
		if confSA != "" {
			d += "spark.kubernetes.authenticate.driver.serviceAccountName: " + confSA
		}
		d += "}\n  driver:\n"
		if driverSA != "" {
			d += "    serviceAccount: " + driverSA + "\n"
		}
		if tmplSA != "" {
			d += "    template: {spec: {serviceAccountName: " + tmplSA + "}}\n"
		}
		return d
	}
	ap := func(confSA, tmplSA string) string {
		d := "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: a}\nspec:\n  sparkConf: {"
		if confSA != "" {
			d += "spark.kubernetes.authenticate.driver.serviceAccountName: " + confSA
		}
		d += "}\n"
		if tmplSA != "" {
			d += "  driverSpec: {podTemplateSpec: {spec: {serviceAccountName: " + tmplSA + "}}}\n"
		}
		return d
	}
	confPath := `spec.sparkConf["spark.kubernetes.authenticate.driver.serviceAccountName"]`
	tests := []struct {
		name, doc, sa, path string
	}{
		{"kubeflow all", kf("d", "c", "t"), "d", "spec.driver.serviceAccount"},
		{"kubeflow conf and template", kf("", "c", "t"), "c", confPath},
		{"kubeflow template", kf("", "", "t"), "t", "spec.driver.template.spec.serviceAccountName"},
		{"kubeflow none", kf("", "", ""), "", ""},
		{"apache both", ap("c", "t"), "c", confPath},
		{"apache template", ap("", "t"), "t", "spec.driverSpec.podTemplateSpec.spec.serviceAccountName"},
		{"apache none", ap("", ""), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := detectOne(t, readObjects(t, tc.doc), CarrierOptions{})
			if c.ServiceAccount != tc.sa || c.ServiceAccountPath != tc.path {
				t.Errorf("ServiceAccount = %q at %q, want %q at %q", c.ServiceAccount, c.ServiceAccountPath, tc.sa, tc.path)
			}
		})
	}
}

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

// slotPaths is the path each slot reports.
type slotPaths struct {
	PodSpec, InitContainers, Volumes, DriverContainer, PodLabels string
}

// TestEnsureSlots writes a marker into every slot and compares the whole object with what
// the operator needs; a second detection then finds every slot where it was written, and a
// second Ensure changes nothing.
func TestEnsureSlots(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		route Injection
		paths slotPaths
		want  string // the object after the writes
	}{{
		name: "kubeflow template injection creates the template",
		doc: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkVersion: 3.5.5
  driver:
    serviceAccount: spark # kept
`,
		paths: slotPaths{
			PodSpec: "spec.driver.template.spec", InitContainers: "spec.driver.template.spec.initContainers",
			Volumes: "spec.driver.template.spec.volumes", DriverContainer: "spec.driver.template.spec.containers[0]",
			PodLabels: "spec.driver.template.metadata.labels",
		},
		want: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkVersion: 3.5.5
  driver:
    serviceAccount: spark # kept
    template:
      spec:
        initContainers:
        - name: marker
        volumes:
        - name: marker
        containers:
        - name: spark-kubernetes-driver
          marker: "true"
      metadata:
        labels:
          marker: "true"
`,
	}, {
		name: "kubeflow template injection keeps the user's driver container",
		doc: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi}
spec:
  template:
    driver:
      template:
        spec:
          containers:
          - name: log-shipper
          - name: spark-kubernetes-driver
`,
		paths: slotPaths{
			PodSpec: "spec.template.driver.template.spec", InitContainers: "spec.template.driver.template.spec.initContainers",
			Volumes: "spec.template.driver.template.spec.volumes", DriverContainer: "spec.template.driver.template.spec.containers[1]",
			PodLabels: "spec.template.driver.template.metadata.labels",
		},
		want: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi}
spec:
  template:
    driver:
      template:
        spec:
          containers:
          - name: log-shipper
          - name: spark-kubernetes-driver
            marker: "true"
          initContainers:
          - name: marker
          volumes:
          - name: marker
        metadata:
          labels:
            marker: "true"
`,
	}, {
		name:  "kubeflow webhook injection",
		route: InjectWebhook,
		doc: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  volumes:
  - name: scratch
    emptyDir: {}
  driver:
    labels: {team: a}
`,
		paths: slotPaths{
			InitContainers: "spec.driver.initContainers", Volumes: "spec.volumes",
			DriverContainer: "spec.driver", PodLabels: "spec.driver.labels",
		},
		want: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  volumes:
  - name: scratch
    emptyDir: {}
  - name: marker
  driver:
    labels: {team: a, marker: "true"}
    initContainers:
    - name: marker
    marker: "true"
`,
	}, {
		name: "apache creates the podTemplateSpec",
		doc: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.ui.port: "4040"}
`,
		paths: slotPaths{
			PodSpec: "spec.driverSpec.podTemplateSpec.spec", InitContainers: "spec.driverSpec.podTemplateSpec.spec.initContainers",
			Volumes: "spec.driverSpec.podTemplateSpec.spec.volumes", DriverContainer: "spec.driverSpec.podTemplateSpec.spec.containers[0]",
			PodLabels: "spec.driverSpec.podTemplateSpec.metadata.labels",
		},
		want: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.ui.port: "4040"}
  driverSpec:
    podTemplateSpec:
      spec:
        initContainers:
        - name: marker
        volumes:
        - name: marker
        containers:
        - name: spark-kubernetes-driver
          marker: "true"
      metadata:
        labels:
          marker: "true"
`,
	}, {
		name: "apache driver container named by the conf",
		doc: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.kubernetes.driver.podTemplateContainerName: main}
  driverSpec:
    podTemplateSpec:
      spec:
        containers: [{name: proxy}, {name: main}]
`,
		paths: slotPaths{
			PodSpec: "spec.driverSpec.podTemplateSpec.spec", InitContainers: "spec.driverSpec.podTemplateSpec.spec.initContainers",
			Volumes: "spec.driverSpec.podTemplateSpec.spec.volumes", DriverContainer: "spec.driverSpec.podTemplateSpec.spec.containers[1]",
			PodLabels: "spec.driverSpec.podTemplateSpec.metadata.labels",
		},
		want: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.kubernetes.driver.podTemplateContainerName: main}
  driverSpec:
    podTemplateSpec:
      spec:
        containers: [{name: proxy}, {name: main, marker: "true"}]
        initContainers:
        - name: marker
        volumes:
        - name: marker
      metadata:
        labels:
          marker: "true"
`,
	}, {
		name: "cronjob pod template, null fields replaced",
		doc: `apiVersion: batch/v1
kind: CronJob
metadata: {name: r}
spec:
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {spark-role: driver}
        spec:
          initContainers: null
          containers:
          - name: report
`,
		paths: slotPaths{
			PodSpec: "spec.jobTemplate.spec.template.spec", InitContainers: "spec.jobTemplate.spec.template.spec.initContainers",
			Volumes: "spec.jobTemplate.spec.template.spec.volumes", DriverContainer: "spec.jobTemplate.spec.template.spec.containers[0]",
			PodLabels: "spec.jobTemplate.spec.template.metadata.labels",
		},
		want: `apiVersion: batch/v1
kind: CronJob
metadata: {name: r}
spec:
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {spark-role: driver, marker: "true"}
        spec:
          initContainers:
          - name: marker
          containers:
          - name: report
            marker: "true"
          volumes:
          - name: marker
`,
	}}
	slots := []Slot{SlotInitContainers, SlotVolumes, SlotDriverContainer, SlotPodLabels}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := CarrierOptions{KubeflowInjection: tc.route}
			c := detectOne(t, readObjects(t, tc.doc), opts)
			got := slotPaths{}
			write := func(c *Carrier) {
				for _, s := range slots {
					n, path, err := c.Ensure(s)
					if err != nil {
						t.Fatalf("Ensure(%d): %v", s, err)
					}
					switch s {
					case SlotInitContainers:
						got.InitContainers = path
						addNamed(n, "marker")
					case SlotVolumes:
						got.Volumes = path
						addNamed(n, "marker")
					case SlotDriverContainer:
						got.DriverContainer = path
						yamlx.SetIfChanged(n, "marker", yamlx.NewStr("true"))
					case SlotPodLabels:
						got.PodLabels = path
						yamlx.SetIfChanged(n, "marker", yamlx.NewStr("true"))
					}
				}
				_, got.PodSpec, _ = c.Lookup(SlotPodSpec)
			}
			write(c)
			if diff := cmp.Diff(tc.paths, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			out := c.Object.MustString()
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
			// What was written is where a new detection looks.
			c2 := detectOne(t, readObjects(t, out), opts)
			for _, s := range slots {
				if n, _, err := c2.Lookup(s); n == nil || err != nil {
					t.Errorf("after writing, Lookup(%d) = %v, %v", s, n, err)
				}
			}
			write(c2)
			if again := c2.Object.MustString(); again != out {
				t.Errorf("second Ensure changed the object:\n%s", again)
			}
		})
	}
}

// addNamed appends {name: name} to a sequence unless an element has that name.
func addNamed(seq *yaml.Node, name string) {
	for _, e := range seq.Content {
		if yamlx.GetStr(e, "name") == name {
			return
		}
	}
	seq.Content = append(seq.Content, yamlx.NewMap("name", name))
}

func TestLookupDoesNotCreate(t *testing.T) {
	for _, file := range []string{"kubeflow-sparkapplication.yaml", "apache-v1.yaml"} {
		objs := fixture(t, file)
		before := objs[0].MustString()
		c := detectOne(t, objs, CarrierOptions{})
		for _, s := range []Slot{SlotPodSpec, SlotInitContainers, SlotVolumes, SlotDriverContainer, SlotPodLabels} {
			n, path, err := c.Lookup(s)
			if n != nil || err != nil || path == "" {
				t.Errorf("%s: Lookup(%d) = %v, %q, %v; want nil with a path", file, s, n, path, err)
			}
		}
		if after := c.Object.MustString(); after != before {
			t.Errorf("%s: Lookup changed the object:\n%s", file, after)
		}
	}
}

func TestWebhookRouteHasNoPodSpec(t *testing.T) {
	c := detectOne(t, fixture(t, "kubeflow-sparkapplication.yaml"), CarrierOptions{KubeflowInjection: InjectWebhook})
	for _, f := range []func(Slot) (*yaml.Node, string, error){c.Lookup, c.Ensure} {
		if _, _, err := f(SlotPodSpec); !errors.Is(err, ErrNoPodSpec) {
			t.Errorf("SlotPodSpec on the webhook injection: %v, want ErrNoPodSpec", err)
		}
	}
	// The existing spec.volumes (with the driver's mount) is the volumes slot.
	n, path, err := c.Lookup(SlotVolumes)
	if err != nil || path != "spec.volumes" || len(n.Content) != 1 || yamlx.GetStr(n.Content[0], "name") != "scratch" {
		t.Errorf("Lookup(SlotVolumes) = %v, %q, %v", n, path, err)
	}
}

func TestEnsureWorkloadWithoutContainer(t *testing.T) {
	doc := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n" +
		"spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {restartPolicy: Never}}}\n"
	c := detectOne(t, readObjects(t, doc), CarrierOptions{})
	_, _, err := c.Ensure(SlotDriverContainer)
	want := "Job ns/j: spec.template.spec.containers: has no container to run the driver in"
	if err == nil || err.Error() != want {
		t.Errorf("Ensure(SlotDriverContainer) = %v, want %s", err, want)
	}
	if strings.Contains(c.Object.MustString(), "containers") {
		t.Errorf("the failed Ensure wrote a container:\n%s", c.Object.MustString())
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
