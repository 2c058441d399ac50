package nodetest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// secondApp turns examples/spark-submit's manifests into another application of the same
// shape: its own names, application id and ConfigMap, and its own RPC and block-manager
// ports (under hostNetwork the declared containerPorts are hostPorts: the scheduler would not
// place two drivers declaring 7078 on one node, SUI011).
var secondApp = strings.NewReplacer(
	"wordcount-5b2d0c9e1f3a7b64", "wordcount-7c4e1a2b3d5f6a80",
	"spark-7e0d4c1a9b2f4e6d8c3b5a7f9e1d2c4b", "spark-1f3e5d7c9b2a4e6f8d0c2b4a6e8f0d1c",
	"spark-drv-9c1e7b3a5d2f4086-conf-map", "spark-drv-4b6d8f0a2c4e6081-conf-map",
	"7078", "7178", "7079", "7179",
)

// TestTwoHostNetworkDriversSamePort: two spark-submit drivers under hostNetwork on one node,
// both with spark.ui.port=4040 (examples/spark-submit with a fixed port; the second
// application renamed, see secondApp), rendered by one function run and created together.
// Both UIs try 4040 on the node's one network: one gets it, the other's bind collides and it
// moves to 4041, as Spark's Utils.startServiceOnPort does (the stand-in logs Spark's
// "could not bind on port 4040. Attempting port 4041."). Each runtime sees both UIs on the
// node (sock_diag lists every socket of the host network) and binds only the one that proves
// it is its application. Asserted:
//   - the two UIs are on 4040 and 4041, and the moved one logged the collision;
//   - each Service's targetPort is its own UI's port, its EndpointSlice the node's address on
//     that port, and a GET through its ClusterIP answers with its own application id;
//   - at no instant did either Service (a watch) select its driver on the other UI's port;
//   - `delete pod` of each: withdrawn before its UI's SIGTERM.
//
// Test-only change: each driver container requests 500m CPU instead of the example's 1 (two
// Pods requesting 1 CPU and the sidecars' 10m do not fit the 2-CPU node).
func TestTwoHostNetworkDriversSamePort(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	manifests := example(t, "spark-submit/manifests.yaml")
	if !strings.Contains(manifests, "spark.ui.port=0\n") {
		t.Fatal("examples/spark-submit no longer sets spark.ui.port=0: update the edit")
	}
	manifests = strings.Replace(manifests, "spark.ui.port=0\n", "spark.ui.port=4040\n", 1)
	objs := renderInput(t, example(t, "spark-submit/fn-config.yaml"), manifests+"\n---\n"+secondApp.Replace(manifests))

	type app struct {
		pod, svc, id, port string
		uid                string
		tl                 *timeline
		slices             *sliceSamples
	}
	var apps []*app
	var ns string
	for _, o := range objs {
		if o.GetKind() != "Pod" {
			continue
		}
		ns = o.GetNamespace()
		a := &app{pod: o.GetName(), svc: strings.TrimSuffix(o.GetName(), "-driver") + "-ui-svc", id: o.GetLabels()["spark-app-selector"]}
		apps = append(apps, a)
		editDriver(t, o, func(ctr map[string]any, _ string) {
			ctr["resources"] = map[string]any{
				"requests": map[string]any{"cpu": "500m", "memory": "1408Mi"},
				"limits":   map[string]any{"memory": "1408Mi"},
			}
		})
	}
	if len(apps) != 2 {
		t.Fatalf("%d driver Pods in the output, want 2", len(apps))
	}
	for _, o := range objs {
		if o.GetKind() == "Pod" {
			sc := runtimeArgs(t, o)
			if !strings.Contains(sc, "--ui-port=4040") || !strings.Contains(sc, "--host-network=true") {
				t.Fatalf("the runtime of %s is not told the UI's fixed port under hostNetwork: %s", o.GetName(), sc)
			}
		}
	}
	n.PrepareNamespace(t, ns)
	for _, a := range apps {
		a.tl = watchService(t, n, ns, a.svc)
		a.slices = sampleSlices(t, n, ns, a.svc)
	}
	ctx := testcluster.Context(t, 5*time.Minute)
	create(t, n, objs)

	listening := regexp.MustCompile(`listening (\d+) app (\S+)`)
	for _, a := range apps {
		m := logLine(t, n, ns, a.pod, "spark-kubernetes-driver", listening, 2*time.Minute)
		a.port = m[1]
		if m[2] != a.id {
			t.Errorf("%s serves application %s, want %s", a.pod, m[2], a.id)
		}
	}
	ports := []string{apps[0].port, apps[1].port}
	sort.Strings(ports)
	if ports[0] != "4040" || ports[1] != "4041" {
		t.Fatalf("the UIs bound %v, want 4040 and 4041", ports)
	}
	for _, a := range apps {
		log, _ := n.PodLog(ns, a.pod, "spark-kubernetes-driver")
		moved := strings.Contains(log, "could not bind on port 4040. Attempting port 4041.")
		if moved != (a.port == "4041") {
			t.Errorf("%s on %s: its log says moved=%t:\n%s", a.pod, a.port, moved, log)
		}
		t.Logf("%s (%s): UI on %s", a.pod, a.id, a.port)
	}

	gw := n.Gateway.String()
	for _, a := range apps {
		testcluster.WaitFor(t, 90*time.Second, a.svc+" bound to its UI", func() (bool, string) {
			_, ok := a.tl.first(func(s svcState) bool { return s.TargetPort == a.port && len(s.Selector) > 0 && !isWithdrawn(s) })
			eps, err := sliceEndpoints(ctx, n, ns, a.svc)
			if err != nil {
				return false, err.Error()
			}
			return ok && len(eps) == 1 && eps[0] == gw+":"+a.port+" ready=true", a.tl.String() + " " + strings.Join(eps, " ")
		})
		pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, a.pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a.uid = string(pod.UID)
	}
	// Through each Service as a client in the cluster reaches it: its own application.
	for i, a := range apps {
		other := apps[1-i]
		svc, err := c.Client.CoreV1().Services(ns).Get(ctx, a.svc, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.Spec.Ports[0].TargetPort.String(); got != a.port {
			t.Errorf("%s targetPort %s, want its UI's %s", a.svc, got, a.port)
		}
		url := fmt.Sprintf("http://%s:%d/api/v1/applications", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
		testcluster.WaitFor(t, 30*time.Second, a.svc+" answering through its ClusterIP "+url, func() (bool, string) {
			code, body, err := get(t, n, url)
			if err != nil {
				return false, err.Error()
			}
			if strings.Contains(body, other.id) {
				t.Fatalf("%s answered with the other application %s: %s", a.svc, other.id, body)
			}
			return code == 200 && strings.Contains(body, `"id":"`+a.id+`"`), fmt.Sprintf("%d %s", code, body)
		})
	}

	// Delete both: each withdrawn before its own UI's SIGTERM.
	for _, a := range apps {
		if err := c.Client.CoreV1().Pods(ns).Delete(ctx, a.pod, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range apps {
		logLine(t, n, ns, a.pod, "spark-kubernetes-driver", regexp.MustCompile(`SIGTERM (\d+)`), 60*time.Second)
		withdrawnAtSigterm(t, n, ns, a.pod, a.uid, a.tl)
	}

	for i, a := range apps {
		other := apps[1-i]
		withdrawn := map[string]string{"sparkui.dev/withdrawn": a.uid}
		for _, s := range a.tl.snapshot() {
			if !(s.Gone || len(s.Selector) == 0 || equal(s.Selector, withdrawn) || s.TargetPort == a.port) {
				t.Errorf("%s selected its driver on another port: %s; timeline:%s", a.svc, s, a.tl)
			}
		}
		for _, s := range a.slices.snapshot() {
			if !(len(s.Eps) == 0 || only(s.Eps, gw+":"+a.port)) {
				t.Errorf("%s's EndpointSlice listed %v (the other UI is on %s); samples:%s", a.svc, s.Eps, other.port, a.slices)
			}
		}
		t.Logf("%s timeline:%s\nEndpointSlice samples:%s", a.svc, a.tl, a.slices)
	}
}

// runtimeArgs is the sidecar's argument list of a rendered Pod, joined by spaces.
func runtimeArgs(t *testing.T, pod *unstructured.Unstructured) string {
	t.Helper()
	ics, _, _ := unstructured.NestedSlice(pod.Object, "spec", "initContainers")
	for _, ic := range ics {
		m := ic.(map[string]any)
		if m["name"] == "sparkui-runtime" {
			args, _ := m["args"].([]any)
			var out []string
			for _, a := range args {
				out = append(out, fmt.Sprint(a))
			}
			return strings.Join(out, " ")
		}
	}
	t.Fatalf("no sparkui-runtime init container in %s", pod.GetName())
	return ""
}
