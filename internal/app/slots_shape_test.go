package app

import (
	"errors"
	"testing"
)

// TestWritableSlotShapes: a field sparkui writes into (the driver container's volumeMounts
// and lifecycle, the pod spec's initContainers and volumes, the pod labels) that has another
// shape is a ShapeError naming it, for every carrier, on the kubeflow template route too:
// writing would otherwise replace what the user wrote.
func TestWritableSlotShapes(t *testing.T) {
	const kfHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const ssaHead = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: pi, namespace: ns}\n"
	const apHead = "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: pi}\n"
	const depHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nb, namespace: ns}\n"
	const podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: d-driver, namespace: ns, labels: {spark-role: driver}}\n"
	const depTmpl = "spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, %s}]}}}\n"
	tests := []struct {
		name, doc string
		route     Route
		want      string
	}{
		{"kubeflow template volumeMounts mapping", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: {name: data, mountPath: /data}}]}}}}\n", RouteTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].volumeMounts: is a mapping, want a list`},
		{"kubeflow template volumeMounts scalar", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: data}]}}}}\n", RouteTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].volumeMounts: is the scalar "data", want a list`},
		{"kubeflow template lifecycle scalar", kfHead + "spec: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, lifecycle: stop}]}}}}\n", RouteTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[0].lifecycle: is the scalar "stop", want a mapping`},
		{"kubeflow template lifecycle list", kfHead + "spec: {driver: {template: {spec: {containers: [{name: other}, {name: spark-kubernetes-driver, lifecycle: [x]}]}}}}\n", RouteTemplate,
			`SparkApplication ns/pi: spec.driver.template.spec.containers[1].lifecycle: is a list, want a mapping`},
		{"kubeflow webhook volumeMounts scalar", kfHead + "spec: {driver: {volumeMounts: data}}\n", RouteWebhook,
			`SparkApplication ns/pi: spec.driver.volumeMounts: is the scalar "data", want a list`},
		{"scheduled template volumeMounts scalar", ssaHead + "spec: {template: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: data}]}}}}}\n", RouteTemplate,
			`ScheduledSparkApplication ns/pi: spec.template.driver.template.spec.containers[0].volumeMounts: is the scalar "data", want a list`},
		{"scheduled template lifecycle list", ssaHead + "spec: {template: {driver: {template: {spec: {containers: [{name: spark-kubernetes-driver, lifecycle: []}]}}}}}\n", RouteTemplate,
			`ScheduledSparkApplication ns/pi: spec.template.driver.template.spec.containers[0].lifecycle: is a list, want a mapping`},
		{"apache volumeMounts mapping", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: {a: b}}]}}}}\n", RouteTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.containers[0].volumeMounts: is a mapping, want a list`},
		{"apache lifecycle scalar", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {containers: [{name: spark-kubernetes-driver, lifecycle: x}]}}}}\n", RouteTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.containers[0].lifecycle: is the scalar "x", want a mapping`},
		{"apache initContainers mapping", apHead + "spec: {driverSpec: {podTemplateSpec: {spec: {initContainers: {a: b}}}}}\n", RouteTemplate,
			`SparkApplication pi: spec.driverSpec.podTemplateSpec.spec.initContainers: is a mapping, want a list`},
		{"deployment volumeMounts mapping", depHead + `spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, volumeMounts: {a: b}}]}}}` + "\n", RouteTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].volumeMounts: is a mapping, want a list`},
		{"deployment lifecycle list", depHead + `spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {containers: [{name: c, lifecycle: [a]}]}}}` + "\n", RouteTemplate,
			`Deployment ns/nb: spec.template.spec.containers[0].lifecycle: is a list, want a mapping`},
		{"pod volumeMounts scalar", podHead + "spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: data}]}\n", RouteTemplate,
			`Pod ns/d-driver: spec.containers[0].volumeMounts: is the scalar "data", want a list`},
		{"pod lifecycle scalar", podHead + "spec: {containers: [{name: spark-kubernetes-driver, lifecycle: x}]}\n", RouteTemplate,
			`Pod ns/d-driver: spec.containers[0].lifecycle: is the scalar "x", want a mapping`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, tc.doc)
			c, err := DetectCarrier(objs[0], CarrierOptions{KubeflowRoute: tc.route})
			var se *ShapeError
			if c != nil || !errors.As(err, &se) {
				t.Fatalf("DetectCarrier = %v, %v; want a *ShapeError", c, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			// Build reports it as the object's carrier error and builds no application.
			m := BuildWith(objs, CarrierOptions{KubeflowRoute: tc.route})
			if len(m.Apps) != 0 || len(m.CarrierErrors) != 1 || m.CarrierErrors[0].Object != objs[0] || m.CarrierErrors[0].Err.Error() != tc.want {
				t.Errorf("Build: %d apps, carrier errors %+v", len(m.Apps), m.CarrierErrors)
			}
		})
	}
}

// TestPodSlotShapesInBuild: a spark-submit driver Pod is built from the index, not through
// DetectCarrier; its wrong-shaped slots are carrier errors there too.
func TestPodSlotShapesInBuild(t *testing.T) {
	const podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: d-driver, namespace: ns, labels: {spark-role: driver}}\n"
	tests := []struct{ name, spec, field, msg string }{
		{"volumes mapping", "spec: {volumes: {a: b}, containers: [{name: spark-kubernetes-driver}]}\n", "spec.volumes", "is a mapping, want a list"},
		{"initContainers mapping", "spec: {initContainers: {a: b}, containers: [{name: spark-kubernetes-driver}]}\n", "spec.initContainers", "is a mapping, want a list"},
		{"volumeMounts mapping", "spec: {containers: [{name: spark-kubernetes-driver, volumeMounts: {a: b}}]}\n", "spec.containers[0].volumeMounts", "is a mapping, want a list"},
		{"lifecycle list", "spec: {containers: [{name: spark-kubernetes-driver, lifecycle: [a]}]}\n", "spec.containers[0].lifecycle", "is a list, want a mapping"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, podHead+tc.spec)
			m := Build(objs, nil)
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
