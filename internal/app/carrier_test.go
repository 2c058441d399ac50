package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkui/sparkui/internal/yamlx"
)

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
