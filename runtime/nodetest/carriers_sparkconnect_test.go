package nodetest

// kubeflow's SparkConnect on the node through the real operator (v2.5.2): the test applies
// the function's SparkConnect and the operator's SparkConnect controller makes the server Pod
// <name>-server itself (github.com/kubeflow/spark-operator/v2 internal/controller/sparkconnect/
// reconciler.go Reconcile: createOrUpdateConfigMap, createOrUpdateServerPod,
// createOrUpdateServerService). It builds the Pod directly (no spark-submit): the template's
// labels, annotations and spec, the server container's command [bash, -c] with
// start-connect-server.sh's line (options.go buildStartConnectServerArgs), env POD_IP and
// SPARK_NO_DAEMONIZE, the executor template's mount, and the container's whole lifecycle
// replaced by its preStop stop-connect-server.sh (mutateServerPod) — which is why sparkui
// carries no withdraw hook there. The node's stand-in image runs that line as Spark would.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/kubeflowtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

var sparkConnectGVR = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1alpha1", Resource: "sparkconnects"}

// connectMade checks that the bound server r is the Pod the SparkConnect controller made from
// carrier: named <name>-server (util.go GetServerPodName) and controlled by the SparkConnect
// (SetControllerReference); the template's labels kept and the operator's selector labels
// added (GetServerSelectorLabels: launched-by-spark-operator, connect-name,
// spark-role=connect-server, spark-version); the server container's command and the
// operator's preStop in place of any other lifecycle; no probes (v2.5.2 sets none);
// sparkui's runtime a native sidecar; and the SparkConnect Ready with status.server naming the
// Pod (createOrUpdateServerPod sets the state from the Pod's readiness).
func connectMade(t *testing.T, n *testnode.Node, carrier *unstructured.Unstructured, r run) {
	t.Helper()
	name := carrier.GetName()
	var sc *unstructured.Unstructured
	testcluster.WaitFor(t, 60*time.Second, "the SparkConnect Ready on "+r.pod.Name, func() (bool, string) {
		var err error
		sc, err = n.Cluster.Dynamic.Resource(sparkConnectGVR).Namespace(carrier.GetNamespace()).Get(testcluster.Context(t, 10*time.Second), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		state, _, _ := unstructured.NestedString(sc.Object, "status", "state")
		pod, _, _ := unstructured.NestedString(sc.Object, "status", "server", "podName")
		return state == "Ready" && pod == r.pod.Name, fmt.Sprintf("state %q, server %q", state, pod)
	})
	p := r.pod
	if p.Name != name+"-server" {
		t.Errorf("the server Pod is %s, want %s-server", p.Name, name)
	}
	if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "SparkConnect" || ref.Name != name {
		t.Errorf("server %s controlled by %v, want SparkConnect %s", p.Name, ref, name)
	}
	version, _, _ := unstructured.NestedString(carrier.Object, "spec", "sparkVersion")
	want := map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true", "sparkoperator.k8s.io/connect-name": name,
		names.LabelSparkRole: "connect-server", "spark-version": version, "sparkui.dev/application": name}
	tmplLabels, _, _ := unstructured.NestedStringMap(carrier.Object, "spec", "server", "template", "metadata", "labels")
	for k, v := range tmplLabels {
		want[k] = v
	}
	for k, v := range want {
		if p.Labels[k] != v {
			t.Errorf("server %s label %s=%q, want %q", p.Name, k, p.Labels[k], v)
		}
	}
	if !nativeSidecar(p) {
		t.Errorf("server %s: no native sidecar: %v", p.Name, p.Spec.InitContainers)
	}
	for _, c := range p.Spec.Containers {
		if c.Name != r.ctr {
			continue
		}
		if len(c.Command) != 2 || c.Command[0] != "bash" || len(c.Args) != 1 ||
			!strings.HasPrefix(c.Args[0], "${SPARK_HOME}/sbin/start-connect-server.sh --master k8s://") ||
			!strings.Contains(c.Args[0], "--conf spark.kubernetes.driver.pod.name="+p.Name) {
			t.Errorf("server container %s: command %q args %q, want the operator's bash -c start-connect-server.sh line", c.Name, c.Command, c.Args)
		}
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil ||
			strings.Join(c.Lifecycle.PreStop.Exec.Command, " ") != "bash -c ${SPARK_HOME}/sbin/stop-connect-server.sh" {
			t.Errorf("server container %s lifecycle %+v, want only the operator's stop-connect-server.sh", c.Name, c.Lifecycle)
		}
		if c.StartupProbe != nil || c.ReadinessProbe != nil || c.LivenessProbe != nil {
			t.Errorf("server container %s has probes; v2.5.2's mutateServerPod sets none", c.Name)
		}
	}
	svc, _, _ := unstructured.NestedString(sc.Object, "status", "server", "serviceName")
	t.Logf("operator: SparkConnect %s Ready, server %s (its own Service %s: web-ui 4040 whatever the UI binds; sparkui's is its own)", name, p.Name, svc)
}

// nativeSidecar reports whether p runs sparkui's runtime as a native sidecar.
func nativeSidecar(p *corev1.Pod) bool {
	for _, c := range p.Spec.InitContainers {
		if c.Name == sidecar.ContainerName {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

// reconciles counts the controller's "Reconciling SparkConnect" lines for name (Reconcile
// logs one each time it runs on an object not being deleted).
func reconciles(op *kubeflowtest.Operator, name string) int {
	c := 0
	for _, l := range strings.Split(op.Log(), "\n") {
		if strings.Contains(l, "Reconciling SparkConnect") && strings.Contains(l, `"`+name+`"`) {
			c++
		}
	}
	return c
}

// neverApplied is SUI072 with the real SparkConnect controller. The API server takes the
// change and the controller reconciles the SparkConnect again (For(&SparkConnect{}) with no
// predicate but the namespace's), yet createOrUpdateServerPod leaves the running server as it
// was: mutateServerPod copies spec.server.template and builds the container only while the
// Pod has no creationTimestamp, and afterwards sets only the owner reference and the
// selector labels, which it already has — so CreateOrUpdate writes nothing. Same Pod, the old
// runtime image, nothing restarted, still bound; nothing in the SparkConnect's status says so.
// Then the way out: the server Pod deleted, the controller's Pod watch (DeleteFunc, by the
// connect-name label) reconciles the SparkConnect, finds no Pod and builds a new one from the
// current spec — with the new runtime, which binds the Service again.
func neverApplied(t *testing.T, n *testnode.Node, op *kubeflowtest.Operator, tl *uiTimeline, svcName string, carrier *unstructured.Unstructured, first run, sel string, before int, applied time.Time) {
	t.Helper()
	ns := carrier.GetNamespace()
	testcluster.WaitFor(t, 30*time.Second, "the controller reconciling the changed SparkConnect", func() (bool, string) {
		if err := op.Exited(); err != nil {
			t.Fatal(err)
		}
		return reconciles(op, carrier.GetName()) > before, fmt.Sprintf("%d reconciles before the change", before)
	})
	seen := time.Since(applied)
	time.Sleep(3 * time.Second) // every reconcile the change set off has run
	untouched(t, n, tl, first)
	p, err := n.Cluster.Client.CoreV1().Pods(ns).Get(context.Background(), first.pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := runtimeImageOf(t, p); img != RuntimeImage {
		t.Errorf("the running server's runtime is %s after the change; SUI072 says it keeps %s", img, RuntimeImage)
	}
	t.Logf("node: change taken by the API server, reconciled by the controller (seen %s after the apply, %d reconciles); server %s untouched, still %s and bound",
		seen.Round(time.Millisecond), reconciles(op, carrier.GetName())-before, first.pod.Name, RuntimeImage)

	deleted := time.Now()
	if err := n.Cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), first.pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ended(t, n, tl, ns, svcName, first, true, deleted)
	second := awaitRun(t, n, tl, ns, svcName, sel, first.pod)
	if img := runtimeImageOf(t, second.pod); img != RuntimeImage2 {
		t.Errorf("the server the controller made again runs the runtime %s, want %s", img, RuntimeImage2)
	}
	connectMade(t, n, carrier, second)
	heldBy(t, tl, second, "after the server Pod's deletion")
	t.Logf("node: server Pod deleted → the controller made %s again with %s (deleted %s, created %s), bound %s after the deletion",
		second.pod.Name, RuntimeImage2, deleted.UTC().Format("15:04:05.000"), second.pod.CreationTimestamp.UTC().Format("15:04:05"), second.bound.At.Sub(deleted).Round(time.Millisecond))
}
