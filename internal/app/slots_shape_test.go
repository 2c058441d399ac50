package app

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestWritableSlotShapes: a field sparkui writes into (the driver container's volumeMounts
// and lifecycle, the pod spec's initContainers and volumes, the pod labels) that has another
// shape is a ShapeError naming it, for every carrier, on the kubeflow template injection too:
// writing would otherwise replace what the user wrote.
func TestWritableSlotShapes(t *testing.T) {
	const kfHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const ssaHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const apHead = "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: pi}\n"
	const depHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nb, namespace: ns}\n"
	const podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: d-driver, namespace: ns, labels: {spark-role: driver}}\n"
	tests := []struct {
		name, doc string
		route     Injection
		want      string
	}{
		{"kubeflow template volumeMounts mapping", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: {name: data, mountPath: /data}}]}}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].volumeMounts: is a mapping, want a list`},
		{"kubeflow template volumeMounts scalar", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: data}]}}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].volumeMounts: is the scalar "data", want a list`},
		{"kubeflow template lifecycle scalar", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, lifecycle: stop}]}}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].lifecycle: is the scalar "stop", want a mapping`},
		{"kubeflow template lifecycle list", kfHead + "spec: {driver: {template: {spec: {containers: [{name: other}, {name: spark-kubernetes-driver, lifecycle: [x]}]}}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[1].lifecycle: is a list, want a mapping`},
		{"kubeflow webhook volumeMounts scalar", kfHead + "spec: {driver: {volumeMounts: data}}\n", InjectWebhook,
			`SparkApplication ns/pi: spec.driver.volumeMounts: is the scalar "data", want a list`},
		{"scheduled template volumeMounts scalar", ssaHead + "spec: {template: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: data}]}}}}}\n", InjectTemplate,
			`ScheduledSparkApplication ns/pi: spec.template.driver.template.spec.containers[0].volumeMounts: is the scalar "data", want a list`},
		{"scheduled template lifecycle list", ssaHead + "spec: {template: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, lifecycle: []}]}}}}}\n", InjectTemplate,
			`ScheduledSparkApplication ns/pi: spec.template.driver.template.spec.containers[0].lifecycle: is a list, want a mapping`},
		{"apache volumeMounts mapping", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: {a: b}}]}}}}\n", InjectTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.containers[0].volumeMounts: is a mapping, want a list`},
		{"apache lifecycle scalar", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {containers: [{name: spark-kubernetes-driver, lifecycle: x}]}}}}\n", InjectTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.containers[0].lifecycle: is the scalar "x", want a mapping`},
		{"apache initContainers mapping", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {initContainers: {a: b}}}}}\n", InjectTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.initContainers: is a mapping, want a list`},
		{"deployment volumeMounts mapping", depHead + `spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, volumeMounts: {a: b}}]}}}` + "\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].volumeMounts: is a mapping, want a list`},
		{"deployment lifecycle list", depHead + `spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, lifecycle: [a]}]}}}` + "\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].lifecycle: is a list, want a mapping`},
		{"pod volumeMounts scalar", podHead + "spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: data}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].volumeMounts: is the scalar "data", want a list`},
		{"pod lifecycle scalar", podHead + "spec: {containers: [{name: spark-kubernetes-driver, lifecycle: x}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].lifecycle: is the scalar "x", want a mapping`},
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
			// Build reports it as the object's carrier error and builds no application.
			m := BuildWith(objs, CarrierOptions{KubeflowInjection: tc.route})
			if len(m.Apps) != 0 || len(m.CarrierErrors) != 1 || m.CarrierErrors[0].Object != objs[0] || m.CarrierErrors[0].Err.Error() != tc.want {
				t.Errorf("Build: %d apps, carrier errors %+v", len(m.Apps), m.CarrierErrors)
			}
		})
	}
}

// TestPodSlotShapesInBuild: a spark-submit driver Pod goes through DetectCarrier like every
// carrier: its wrong-shaped fields are the same carrier error from DetectCarrier and from
// BuildWith, and no application is built from it.
func TestPodSlotShapesInBuild(t *testing.T) {
	const podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: d-driver, namespace: ns, labels: {spark-role: driver}}\n"
	tests := []struct{ name, spec, field, msg string }{
		{"volumes mapping", "spec: {volumes: {a: b}, containers: [{name: spark-kubernetes-driver}]}\n", "spec.volumes", "is a mapping, want a list"},
		{"initContainers mapping", "spec: {initContainers: {a: b}, containers: [{name: spark-kubernetes-driver}]}\n", "spec.initContainers", "is a mapping, want a list"},
		{"volumeMounts mapping", "spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: {a: b}}]}\n", "spec.containers[0].volumeMounts", "is a mapping, want a list"},
		{"lifecycle list", "spec: {containers: [{name: spark-kubernetes-driver, lifecycle: [a]}]}\n", "spec.containers[0].lifecycle", "is a list, want a mapping"},
		{"spec list", "spec: []\n", "spec", "is a list, want a mapping"},
		{"containers mapping", "spec: {containers: {a: b}}\n", "spec.containers", "is a mapping, want a list"},
		{"hostNetwork word", "spec: {hostNetwork: maybe, containers: [{name: spark-kubernetes-driver}]}\n", "spec.hostNetwork", `is "maybe", want true or false`},
		{"serviceAccountName list", "spec: {serviceAccountName: [a], containers: [{name: spark-kubernetes-driver}]}\n", "spec.serviceAccountName", "is a list, want a scalar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, podHead+tc.spec)
			c, err := DetectCarrier(objs[0], CarrierOptions{})
			var se *ShapeError
			if c != nil || !errors.As(err, &se) || se.Field != tc.field || se.Msg != tc.msg {
				t.Errorf("DetectCarrier = %v, %v; want %s %s", c, err, tc.field, tc.msg)
			}
			m := BuildWith(objs, CarrierOptions{})
			if len(m.Apps) != 0 || len(m.CarrierErrors) != 1 {
				t.Fatalf("%d apps, carrier errors %+v", len(m.Apps), m.CarrierErrors)
			}
			e := m.CarrierErrors[0]
			if e.Object != objs[0] || e.Err.Kind != "Pod" || e.Err.Name != "d-driver" || e.Err.Namespace != "ns" || e.Err.Field != tc.field || e.Err.Msg != tc.msg {
				t.Errorf("carrier error %+v, want Pod ns/d-driver %s %s", e.Err, tc.field, tc.msg)
			}
		})
	}
}

// TestUnreadableDriverPorts: a driver port whose containerPort is not an integer, or is
// missing, is a ShapeError naming it (transform drops only a real 0, and would otherwise have
// deleted these, the user's own ports included); a real 0 is no error.
func TestUnreadableDriverPorts(t *testing.T) {
	const podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: d-driver, namespace: ns, labels: {spark-role: driver}}\n"
	const kfHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const depHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nb, namespace: ns}\n"
	tests := []struct {
		name, doc string
		route     Injection
		want      string
	}{
		{"pod word", podHead + "spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: rpc, containerPort: 7078}, {name: metrics, containerPort: nine}]}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].ports[1].containerPort: is the scalar "nine", want an integer`},
		{"pod fraction", podHead + "spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: metrics, containerPort: 9090.5}]}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].ports[0].containerPort: is the scalar "9090.5", want an integer`},
		{"pod quoted word", podHead + "spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: metrics, containerPort: \"9090.0\"}]}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].ports[0].containerPort: is the scalar "9090.0", want an integer`},
		{"pod missing", podHead + "spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: metrics}]}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].ports[0].containerPort: is missing, want an integer`},
		{"pod ports mapping", podHead + "spec: {containers: [{name: spark-kubernetes-driver, ports: {containerPort: 0}}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].ports: is a mapping, want a list`},
		{"pod port scalar", podHead + "spec: {containers: [{name: spark-kubernetes-driver, ports: [\"4040\"]}]}\n", InjectTemplate,
			`Pod ns/d-driver: spec.containers[0].ports[0]: is the scalar "4040", want a mapping`},
		{"kubeflow template fraction", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: metrics, containerPort: 9090.5}]}]}}}}\n", InjectTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].ports[0].containerPort: is the scalar "9090.5", want an integer`},
		{"kubeflow webhook word", kfHead + "spec: {driver: {ports: [{name: metrics, containerPort: nine}]}}\n", InjectWebhook,
			`SparkApplication ns/pi: spec.driver.ports[0].containerPort: is the scalar "nine", want an integer`},
		{"deployment missing", depHead + "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, ports: [{name: ui, containerPort: 4040}, {name: metrics, protocol: TCP}]}]}}}\n", InjectTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].ports[1].containerPort: is missing, want an integer`},
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
			m := BuildWith(objs, CarrierOptions{KubeflowInjection: tc.route})
			if len(m.Apps) != 0 || len(m.CarrierErrors) != 1 || m.CarrierErrors[0].Err.Error() != tc.want {
				t.Errorf("Build: %d apps, carrier errors %+v", len(m.Apps), m.CarrierErrors)
			}
		})
	}
	// A real 0 is what transform drops (SUI001), and 9090.0 is the port 9090 to the API server
	// (kubectl's YAML-to-JSON writes it 9090; verified by examples' TestAPIServerAcceptsOutput
	// on testdata/bad-driver-ports): no shape error.
	for _, port := range []string{"0", "9090.0"} {
		objs := readObjects(t, podHead+"spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: spark-ui, containerPort: "+port+"}]}]}\n")
		if m := BuildWith(objs, CarrierOptions{}); len(m.Apps) != 1 || len(m.CarrierErrors) != 0 {
			t.Errorf("containerPort %s: %d apps, carrier errors %+v", port, len(m.Apps), m.CarrierErrors)
		}
	}
}

// TestZeroContainerPortOnlyZero: only a 0 (0.0 is one to the API server) is a zero port; an
// unreadable or missing containerPort is not one (it is a shape error, never dropped as a 0).
func TestZeroContainerPortOnlyZero(t *testing.T) {
	for doc, want := range map[string]bool{
		"{containerPort: 0}": true, "{containerPort: 0.0}": true, "{containerPort: 4040}": false, "{containerPort: nine}": false,
		"{containerPort: 9090.0}": false, "{containerPort: 0.5}": false, "{name: x}": false,
	} {
		if got := ZeroContainerPort(readObjects(t, doc)[0].YNode()); got != want {
			t.Errorf("ZeroContainerPort(%s) = %t, want %t", doc, got, want)
		}
	}
}

// TestLongCarrierNameIdentity: a carrier name longer than 63 characters (valid for a custom
// resource or a workload, whose names may reach 253) gives an identity label value and a
// runtime guard the API server accepts, the same in both.
func TestLongCarrierNameIdentity(t *testing.T) {
	name := strings.Repeat("quarterly-revenue-", 5) + "reconciliation" // 104 characters
	objs := readObjects(t, "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: "+name+", namespace: ns}\nspec: {driver: {serviceAccount: s}}\n")
	m := BuildWith(objs, CarrierOptions{})
	if len(m.Apps) != 1 {
		t.Fatalf("%d apps, errors %+v", len(m.Apps), m.CarrierErrors)
	}
	a := m.Apps[0]
	if errs := validation.IsValidLabelValue(a.IdentityValue); len(errs) > 0 {
		t.Errorf("identity value %q: %v", a.IdentityValue, errs)
	}
	if got := a.Carrier.IdentityLabels()[LabelApplication]; got != a.IdentityValue {
		t.Errorf("carrier identity label %q, app identity %q", got, a.IdentityValue)
	}
	cfg := a.RuntimeConfig("")
	key, value, _ := strings.Cut(cfg.GuardLabel, "=")
	if key != LabelApplication || value != a.IdentityValue {
		t.Errorf("guard label %q, want %s=%s", cfg.GuardLabel, LabelApplication, a.IdentityValue)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		t.Errorf("guard key %q: %v", key, errs)
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		t.Errorf("guard value %q: %v", value, errs)
	}
	if !strings.Contains(cfg.PodSelector, LabelApplication+"="+a.IdentityValue+",") {
		t.Errorf("selector %q does not carry the identity %q", cfg.PodSelector, a.IdentityValue)
	}
}
