package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
)

// TestBuildCarriers: every carrier fixture becomes one application with the names, identity,
// conf-derived settings and runtime settings the contract gives it (docs/operators.md), and the places its
// additions go; the spark-submit identity is left to Pods.
func TestBuildCarriers(t *testing.T) {
	type want struct {
		podName, sa, uiSvc, binder, driverPath string
		uiPort                                 int
		hostNet                                bool
		runtime                                sidecar.Config
	}
	// Operators: the run's spark-app-selector through $(SPARKUI_APP_ID), no owner.
	cfg := func(name, svc string, port int, hostNet bool) sidecar.Config {
		return sidecar.Config{Service: svc, UIPort: port, MaxRetries: 16, HostNetwork: hostNet,
			GuardLabel:       "sparkui.dev/application=" + name,
			PodSelector:      "spark-app-selector=$(SPARKUI_APP_ID),sparkui.dev/application=" + name + ",spark-role=driver",
			NoOwnerReference: true, SkipPorts: "7078,7079"}
	}
	for _, tc := range []struct {
		file  string
		route Injection
		want  want
	}{
		{"kubeflow-sparkapplication.yaml", InjectTemplate, want{"pi-estimate-driver", "pi-driver", "pi-estimate-sparkui-ui-svc", "pi-estimate-sparkui-ui-svc-binder",
			"spec.driver.template.spec.containers[0]", 4045, false, cfg("pi-estimate", "pi-estimate-sparkui-ui-svc", 4045, false)}},
		{"kubeflow-sparkapplication.yaml", InjectWebhook, want{"pi-estimate-driver", "pi-driver", "pi-estimate-sparkui-ui-svc", "pi-estimate-sparkui-ui-svc-binder",
			"spec.driver", 4045, false, cfg("pi-estimate", "pi-estimate-sparkui-ui-svc", 4045, false)}},
		{"apache-v1.yaml", InjectTemplate, want{"", "pi-runner", "pi-autoscaled-sparkui-ui-svc", "pi-autoscaled-sparkui-ui-svc-binder",
			"spec.driverSpec.podTemplateSpec.spec.containers[0]", 4040, false, cfg("pi-autoscaled", "pi-autoscaled-sparkui-ui-svc", 4040, false)}},
		// A workload: no app id label to read (nobody but Spark's submission sets it), and
		// the conf (spark-defaults.conf from its ConfigMap) sets no spark.app.id.
		{"notebook-statefulset.yaml", InjectTemplate, want{"", "lab-spark", "lab-sparkui-ui-svc", "lab-sparkui-ui-svc-binder",
			"spec.template.spec.containers[0]", 4041, false, sidecar.Config{Service: "lab-sparkui-ui-svc", UIPort: 4041, MaxRetries: 4,
				GuardLabel:       "sparkui.dev/application=lab",
				PodSelector:      "statefulset.kubernetes.io/pod-name=$(SPARKUI_RUN_LABEL_VALUE),sparkui.dev/application=lab,spark-role=driver",
				NoOwnerReference: true}}},
	} {
		t.Run(tc.file+"/"+tc.route.String(), func(t *testing.T) {
			m := BuildWith(fixture(t, tc.file), CarrierOptions{KubeflowInjection: tc.route})
			if len(m.Apps) != 1 || len(m.CarrierErrors) != 0 {
				t.Fatalf("%d apps, errors %v", len(m.Apps), m.CarrierErrors)
			}
			a := m.Apps[0]
			got := want{a.DriverPodName, a.ServiceAccount, a.UIServiceName, a.BinderName, a.DriverContainerPath(), a.Settings.UIPort, a.HostNetwork, a.RuntimeConfig(sidecar.ExternalURINone)}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if a.IsSubmitOutput() || a.IdentityKey != LabelApplication || a.IdentityValue != a.Carrier.Name || a.Prefix != a.Carrier.Name+"-sparkui" {
				t.Errorf("identity %s=%s, prefix %s", a.IdentityKey, a.IdentityValue, a.Prefix)
			}
			if a.ConfSource != FromCarrier {
				t.Errorf("conf from %s", a.ConfSource)
			}
		})
	}
}

// TestBuildHistoryServerAndBadShapes: a History Server is no application, an unreadable
// carrier is an error with its object, and neither stops the others.
func TestBuildHistoryServerAndBadShapes(t *testing.T) {
	objs := readObjects(t, `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: shs, namespace: x}
spec: {mainClass: org.apache.spark.deploy.history.HistoryServer, runtimeVersions: {sparkVersion: 4.0.1}}
---
apiVersion: spark.apache.org/v1beta1
kind: SparkApplication
metadata: {name: bad, namespace: x}
spec: {sparkConf: [a], runtimeVersions: {sparkVersion: 4.0.1}}
---
apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: ok, namespace: x}
spec: {runtimeVersions: {sparkVersion: 4.0.1}}
`)
	m := BuildWith(objs, CarrierOptions{})
	if len(m.Apps) != 1 || m.Apps[0].Carrier.Name != "ok" {
		t.Errorf("apps %v", m.Apps)
	}
	if len(m.HistoryServers) != 1 || m.HistoryServers[0].Name != "shs" {
		t.Errorf("history servers %v", m.HistoryServers)
	}
	if len(m.CarrierErrors) != 1 || m.CarrierErrors[0].Object != objs[1] || m.CarrierErrors[0].Err.Field != "spec.sparkConf" {
		t.Errorf("carrier errors %+v", m.CarrierErrors)
	}
}

// TestDuplicateCarriers: the same carrier twice (kind, API group, namespace and name) is one
// application, built from the first; the later copy is a duplicate (SUI019), not built.
func TestDuplicateCarriers(t *testing.T) {
	objs := readObjects(t, `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: x}
spec: {driver: {serviceAccount: a}}
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: x}
spec: {driver: {serviceAccount: b}}
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: other}
spec: {driver: {serviceAccount: c}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: nb, namespace: x}
spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: nb, namespace: x}
spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: d}]}}}
---
apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: ap, namespace: x}
spec: {}
---
apiVersion: spark.apache.org/v1beta1
kind: SparkApplication
metadata: {name: ap, namespace: x}
spec: {}
---
apiVersion: v1
kind: Pod
metadata: {name: d-driver, namespace: x, labels: {spark-role: driver}}
spec: {containers: [{name: spark-kubernetes-driver}]}
---
apiVersion: v1
kind: Pod
metadata: {name: d-driver, namespace: x, labels: {spark-role: driver}}
spec: {containers: [{name: spark-kubernetes-driver}]}
`)
	m := BuildWith(objs, CarrierOptions{})
	var built []*yaml.RNode
	for _, a := range m.Apps {
		built = append(built, a.Object)
	}
	want := []*yaml.RNode{objs[0], objs[2], objs[3], objs[5], objs[7]}
	if len(built) != len(want) {
		t.Fatalf("built %d applications, want %d", len(built), len(want))
	}
	for i := range want {
		if built[i] != want[i] {
			t.Errorf("application %d built from %s %s/%s", i, built[i].GetKind(), built[i].GetNamespace(), built[i].GetName())
		}
	}
	if len(m.Duplicates) != 4 || m.Duplicates[0] != objs[1] || m.Duplicates[1] != objs[4] || m.Duplicates[2] != objs[6] || m.Duplicates[3] != objs[8] {
		t.Errorf("duplicates %v", m.Duplicates)
	}
}
