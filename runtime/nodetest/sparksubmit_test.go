package nodetest

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// TestSparkSubmitDriverOnNode: the function's output on examples/spark-submit (spark.ui.port=0,
// hostNetwork) created as is; the kubelet runs the runtime as a native sidecar and the driver
// container (the stand-in UI under the manifests' Spark image name). Asserted on the UI
// Service's timeline, watched from before it exists:
//   - bind: targetPort = the port the UI really bound (random), selector set, the
//     EndpointSlice = the Pod's IP (the node's, hostNetwork) on that port, Ready; the UI
//     answers there with this application;
//   - `delete pod`: the withdrawn selector (sparkui.dev/withdrawn: <Pod UID>) and an empty
//     EndpointSlice BEFORE the driver container gets SIGTERM (preStop runs first);
//   - the garbage collector deletes the Service with the Pod (the runtime's ownerReference).
//
// No other state ever appears: every selector seen is empty (before the bind), this Pod's, or
// the withdrawn one.
func TestSparkSubmitDriverOnNode(t *testing.T) { sparkSubmitRun(t, false) }

// TestSparkSubmitDriverForceDeleted: the same Pod deleted with grace 0 (`kubectl delete pod
// --force --grace-period=0`, an eviction of a dead node's Pods): the Pod object goes at once
// and the kubelet then stops the containers. The Service must still never route elsewhere:
// withdrawn or collected, the EndpointSlice emptied, the Service gone with the Pod.
func TestSparkSubmitDriverForceDeleted(t *testing.T) { sparkSubmitRun(t, true) }

func sparkSubmitRun(t *testing.T, force bool) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	objs := render(t, "spark-submit")
	var podName, svcName, ns, appID string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, ns = o.GetName(), o.GetNamespace()
			appID = o.GetLabels()["spark-app-selector"]
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	if podName == "" || svcName == "" {
		t.Fatalf("no driver Pod or UI Service in the output")
	}
	n.PrepareNamespace(t, ns)
	tl := watchService(t, n, ns, svcName)
	ctx := testcluster.Context(t, 4*time.Minute)

	applied := time.Now()
	create(t, n, objs)

	// The UI's real port, from the stand-in's log.
	m := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`listening (\d+) app (\S+)`), 2*time.Minute)
	uiPort, loggedApp := m[1], m[2]
	if loggedApp != appID {
		t.Errorf("the stand-in serves application %q, want %q (from spark.properties)", loggedApp, appID)
	}
	var pod *corev1.Pod
	testcluster.WaitFor(t, 90*time.Second, "the UI Service bound to the UI's port", func() (bool, string) {
		s, ok := tl.first(func(s svcState) bool { return s.TargetPort == uiPort && len(s.Selector) > 0 })
		return ok, tl.String() + " " + s.String()
	})
	bound, _ := tl.first(func(s svcState) bool { return s.TargetPort == uiPort && len(s.Selector) > 0 })
	t.Logf("apply → bound: %s", bound.At.Sub(applied).Round(time.Millisecond))

	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.PodIP != n.Gateway.String() {
		t.Errorf("hostNetwork Pod IP %q, want the node's %s", pod.Status.PodIP, n.Gateway)
	}
	// The sidecar started before the driver and is Ready (its startupProbe passed).
	if len(pod.Status.InitContainerStatuses) != 1 || pod.Status.InitContainerStatuses[0].Name != "sparkui-runtime" ||
		pod.Status.InitContainerStatuses[0].Started == nil || !*pod.Status.InitContainerStatuses[0].Started {
		t.Errorf("the runtime sidecar is not started: %+v", pod.Status.InitContainerStatuses)
	}

	// The runtime's memory in its real cgroup, while it watches a bound UI.
	if rt := pod.Status.InitContainerStatuses; len(rt) == 1 && rt[0].ContainerID != "" {
		rss, peak, err := n.ContainerMemory(string(pod.UID), rt[0].ContainerID)
		if err != nil {
			t.Error(err)
		} else {
			t.Logf("runtime container memory: RSS %.1f MiB, cgroup peak %.1f MiB (limit 64 MiB)", float64(rss)/(1<<20), float64(peak)/(1<<20))
			if peak >= 64<<20 {
				t.Errorf("the runtime's cgroup peaked at %d bytes, at its 64Mi limit", peak)
			}
		}
	}

	want := n.Gateway.String() + ":" + uiPort + " ready=true"
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the UI", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		if err != nil {
			return false, err.Error()
		}
		return len(eps) == 1 && eps[0] == want, strings.Join(eps, " ")
	})
	code, body, err := get(t, n, "http://"+n.Gateway.String()+":"+uiPort+"/api/v1/applications")
	if err != nil || code != 200 || !strings.Contains(body, `"id":"`+appID+`"`) {
		t.Errorf("the endpoint does not answer as the application: %d %s %v", code, body, err)
	}
	// Through the Service as a client in the cluster reaches it: its ClusterIP and front port,
	// kube-proxy's rules, the bound targetPort.
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	front := fmt.Sprintf("http://%s:%d/api/v1/applications", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	testcluster.WaitFor(t, 30*time.Second, "the UI through the Service's ClusterIP "+front, func() (bool, string) {
		code, body, err := get(t, n, front)
		if err != nil {
			return false, err.Error()
		}
		return code == 200 && strings.Contains(body, `"id":"`+appID+`"`), fmt.Sprintf("%d %s", code, body)
	})

	// Delete the Pod as a user does (its grace period); read the SIGTERM line while the
	// container's log still exists.
	deleted := time.Now()
	opts := metav1.DeleteOptions{}
	if force {
		opts.GracePeriodSeconds = ptr.To[int64](0)
	}
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, podName, opts); err != nil {
		t.Fatal(err)
	}
	withdrawn := map[string]string{"sparkui.dev/withdrawn": string(pod.UID)}
	if force {
		forced(t, n, tl, ns, svcName, uiPort, withdrawn, deleted)
		return
	}
	sig := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`SIGTERM (\d+)`), 60*time.Second)
	ns64, _ := strconv.ParseInt(sig[1], 10, 64)
	sigterm := time.Unix(0, ns64)
	// The watch saw the withdrawal no earlier than it happened: a receipt before the SIGTERM
	// proves the order.
	w, ok := tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) })
	if !ok {
		testcluster.WaitFor(t, 30*time.Second, "the withdrawn selector", func() (bool, string) {
			var ok bool
			w, ok = tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) })
			return ok, tl.String()
		})
	}
	// The proof free of clocks: what the API server answered the UI's own request, made in
	// its SIGTERM handler.
	withdrawnAtSigterm(t, n, ns, podName, string(pod.UID), tl)
	// The watch's view (received no earlier than the change was made), a measurement.
	if !w.At.Before(sigterm) {
		t.Logf("note: the watch received the withdrawal %s after the UI's SIGTERM (the API server's answer above is the proof)", w.At.Sub(sigterm))
	}
	t.Logf("delete → withdrawn %s, delete → UI SIGTERM %s (margin %s)", w.At.Sub(deleted).Round(time.Millisecond),
		sigterm.Sub(deleted).Round(time.Millisecond), sigterm.Sub(w.At).Round(time.Millisecond))
	testcluster.WaitFor(t, 30*time.Second, "an empty EndpointSlice", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		return err == nil && len(eps) == 0, strings.Join(eps, " ")
	})

	// The garbage collector deletes the Service with the Pod.
	testcluster.WaitFor(t, 90*time.Second, "the UI Service collected with the Pod", func() (bool, string) {
		_, err := c.Client.CoreV1().Services(ns).Get(context.Background(), svcName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), tl.String()
	})

	// Every state seen: not bound yet (no selector), this Pod's bind, withdrawn, deleted.
	for _, s := range tl.snapshot() {
		switch {
		case s.Gone, len(s.Selector) == 0, equal(s.Selector, withdrawn):
		case s.TargetPort == uiPort && !equal(s.Selector, withdrawn):
		default:
			t.Errorf("the Service routed elsewhere: %s", s)
		}
	}
	t.Logf("timeline:%s", tl)
}

// forced checks what a force deletion leaves: the EndpointSlice emptied, the Service
// collected, and no state but not-bound, bound to this UI, withdrawn, deleted.
func forced(t *testing.T, n *testnode.Node, tl *timeline, ns, svcName, uiPort string, withdrawn map[string]string, deleted time.Time) {
	t.Helper()
	ctx := testcluster.Context(t, 2*time.Minute)
	testcluster.WaitFor(t, 60*time.Second, "an empty EndpointSlice", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		return err == nil && len(eps) == 0, strings.Join(eps, " ")
	})
	t.Logf("force delete → empty EndpointSlice %s", time.Since(deleted).Round(time.Millisecond))
	testcluster.WaitFor(t, 90*time.Second, "the UI Service collected with the Pod", func() (bool, string) {
		_, err := n.Cluster.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), tl.String()
	})
	for _, s := range tl.snapshot() {
		if !(s.Gone || len(s.Selector) == 0 || equal(s.Selector, withdrawn) || s.TargetPort == uiPort) {
			t.Errorf("the Service routed elsewhere: %s", s)
		}
	}
	if w, ok := tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) }); ok {
		t.Logf("force delete → withdrawn %s", w.At.Sub(deleted).Round(time.Millisecond))
	}
	t.Logf("timeline:%s", tl)
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
