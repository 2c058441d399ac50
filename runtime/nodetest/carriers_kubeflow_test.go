package nodetest

// The kubeflow rows of the node tests run through the real kubeflow spark-operator v2.5.2
// (testkit/kubeflowtest: its controller and its mutating webhook, the stand-in spark-submit
// creating Spark's driver Pod, headless Service and conf ConfigMap from the operator's
// arguments and template file): the test applies the function's SparkApplication or
// ScheduledSparkApplication as a pipeline does and never builds a driver Pod itself. The
// SparkConnect server Pod is made by the same binary's SparkConnect controller
// (carriers_sparkconnect_test.go).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/kubeflowtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// kubeflowNamespaces are the namespaces of the kubeflow examples and of the SparkConnect
// fixture (analytics): the operator manages them.
var kubeflowNamespaces = []string{"spark-jobs", "etl", "analytics"}

var sparkAppGVR = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}

// startKubeflow prepares the kubeflow namespaces and runs the operator's controller and
// webhook against the node's control plane.
func startKubeflow(t *testing.T, n *testnode.Node) *kubeflowtest.Operator {
	t.Helper()
	for _, ns := range kubeflowNamespaces {
		n.PrepareNamespace(t, ns)
	}
	return kubeflowtest.StartWith(t, n.Cluster, kubeflowtest.Options{Namespaces: kubeflowNamespaces, Webhook: true})
}

// kubeflowEdit makes the test-only changes to a kubeflow carrier before it is applied: the
// stand-in UI's FAKESPARK_UI_SERVICE (Spark reads none of it) where each route puts a driver
// env — the driver template's container (Spark keeps the template container's env:
// BasicDriverFeatureStep), or spec.driver.env, which the operator's webhook appends
// (sparkpod_defaulter.go addEnvVars) — and for a ScheduledSparkApplication a schedule that
// comes round within the test ("@every 20s": the controller parses with robfig/cron's
// ParseStandard, which takes descriptors: scheduledsparkapplication/controller.go). A
// SparkConnect's server template (spec.server.template) is the Pod's: the controller keeps
// the container's env and appends its own (sparkconnect/reconciler.go mutateServerPod).
func kubeflowEdit(t *testing.T, o *unstructured.Unstructured, svcName string, extraEnv ...corev1.EnvVar) {
	t.Helper()
	spec := []string{"spec"}
	if o.GetKind() == "ScheduledSparkApplication" {
		if err := unstructured.SetNestedField(o.Object, "@every 20s", "spec", "schedule"); err != nil {
			t.Fatal(err)
		}
		spec = append(spec, "template")
	}
	env := append([]corev1.EnvVar{{Name: "FAKESPARK_UI_SERVICE", Value: svcName}}, extraEnv...)
	driver := append(append([]string{}, spec...), "driver")
	if o.GetKind() == "SparkConnect" {
		driver = []string{"spec", "server"}
	}
	if tmpl, ok, _ := unstructured.NestedMap(o.Object, append(driver, "template")...); ok {
		ps := &corev1.PodSpec{}
		fromMap(t, tmpl["spec"], ps)
		for i := range ps.Containers {
			if ps.Containers[i].Name == "spark-kubernetes-driver" {
				ps.Containers[i].Env = append(ps.Containers[i].Env, env...)
			}
		}
		tmpl["spec"] = toMap(t, ps)
		if err := unstructured.SetNestedMap(o.Object, tmpl, append(driver, "template")...); err != nil {
			t.Fatal(err)
		}
		return
	}
	var have []any
	have, _, _ = unstructured.NestedSlice(o.Object, append(driver, "env")...)
	for _, e := range env {
		have = append(have, toMap(t, e))
	}
	if err := unstructured.SetNestedSlice(o.Object, have, append(driver, "env")...); err != nil {
		t.Fatal(err)
	}
}

// sparkApp is the SparkApplication whose driver r is: the carrier itself, or for a
// ScheduledSparkApplication the run the controller created (labelled
// sparkoperator.k8s.io/scheduled-app-name).
func sparkApp(t *testing.T, n *testnode.Node, carrier *unstructured.Unstructured, pod *corev1.Pod) *unstructured.Unstructured {
	t.Helper()
	name := carrier.GetName()
	if carrier.GetKind() == "ScheduledSparkApplication" {
		name = pod.Labels["sparkoperator.k8s.io/app-name"]
	}
	app, err := n.Cluster.Dynamic.Resource(sparkAppGVR).Namespace(carrier.GetNamespace()).Get(testcluster.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the SparkApplication of driver %s: %v", pod.Name, err)
	}
	return app
}

// operatorMade checks that the bound driver r is the operator's, from this submission, and
// that the operator reads it RUNNING: status.applicationState RUNNING, driverInfo.podName,
// the Pod's submission-id label = status.submissionID (submission.go driverConfOption),
// sparkApplicationId = its spark-app-selector (controller.go updateDriverState). With the
// webhook route the Pod carries mutated-by-spark-operator and its sparkui-runtime init
// container — which only the webhook adds there (spark-submit builds the Pod from no
// template: sparkpod_defaulter.go addInitContainers) — and the driver container the
// preStop hook (addPodLifeCycleConfig).
func operatorMade(t *testing.T, n *testnode.Node, carrier *unstructured.Unstructured, r run, webhook bool) {
	t.Helper()
	if carrier.GetKind() == "SparkConnect" {
		connectMade(t, n, carrier, r)
		return
	}
	var app *unstructured.Unstructured
	testcluster.WaitFor(t, 60*time.Second, "the SparkApplication RUNNING on "+r.pod.Name, func() (bool, string) {
		app = sparkApp(t, n, carrier, r.pod)
		state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
		pod, _, _ := unstructured.NestedString(app.Object, "status", "driverInfo", "podName")
		return state == "RUNNING" && pod == r.pod.Name, fmt.Sprintf("state %q, driver %q", state, pod)
	})
	id, _, _ := unstructured.NestedString(app.Object, "status", "submissionID")
	appID, _, _ := unstructured.NestedString(app.Object, "status", "sparkApplicationId")
	l := r.pod.Labels
	if l["sparkoperator.k8s.io/launched-by-spark-operator"] != "true" || l["sparkoperator.k8s.io/submission-id"] != id || id == "" {
		t.Errorf("driver %s labels %v: want launched-by-spark-operator and submission-id %q", r.pod.Name, l, id)
	}
	if appID != r.appID || l["spark-app-selector"] != appID {
		t.Errorf("status.sparkApplicationId %q, Pod's spark-app-selector %q, the UI's app %q: want one id", appID, l["spark-app-selector"], r.appID)
	}
	if _, mutated := l["sparkoperator.k8s.io/mutated-by-spark-operator"]; mutated != webhook {
		t.Errorf("driver %s mutated-by-spark-operator present %t, want %t (template route: Spark applies the template; else the webhook)", r.pod.Name, mutated, webhook)
	}
	if !nativeSidecar(r.pod) {
		t.Errorf("driver %s: no native sidecar %s: %v", r.pod.Name, sidecar.ContainerName, r.pod.Spec.InitContainers)
	}
	for _, c := range r.pod.Spec.Containers {
		if c.Name == "spark-kubernetes-driver" && (c.Lifecycle == nil || c.Lifecycle.PreStop == nil) {
			t.Errorf("driver container without sparkui's preStop: %+v", c.Lifecycle)
		}
	}
	uiSvc, _, _ := unstructured.NestedString(app.Object, "status", "driverInfo", "webUIServiceName")
	t.Logf("operator: %s %s RUNNING, submission %s, driver %s, operator's UI Service %s (sparkui's is its own)", app.GetKind(), app.GetName(), id, r.pod.Name, uiSvc)
	if strings.HasSuffix(uiSvc, "-sparkui-ui-svc") {
		t.Errorf("the operator's UI Service %q is sparkui's name", uiSvc)
	}
}

// deleteObject deletes o with background propagation: the garbage collector then deletes
// what it owns (a Job's own default would orphan its Pods).
func deleteObject(t *testing.T, n *testnode.Node, o *unstructured.Unstructured) {
	t.Helper()
	m, err := n.Cluster.Mapping(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Cluster.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Delete(testcluster.Context(t, 30*time.Second), o.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatalf("deleting %s %s: %v", o.GetKind(), o.GetName(), err)
	}
}
