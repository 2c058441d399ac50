package nodetest

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestUICrashWithdrawsThenRebinds: the UI process crashes (exit 137, no preStop, no SIGTERM)
// while bound. The function's spark-submit output with two test-only changes: restartPolicy
// Always (as a Deployment's driver Pod has), and the stand-in told to crash once, 4 s after
// it starts. Asserted on the UI Service's timeline:
//   - withdrawn (sparkui.dev/withdrawn: <Pod UID>) within a second of the crash: the runtime
//     sees the bound socket gone at its next poll (100 ms), nothing else tells it;
//   - the kubelet restarts the driver container; its UI binds another random port and the
//     Service is bound to THAT port, the EndpointSlice following;
//   - at no instant does the Service select the Pod with a port the UI is not on: every state
//     is not-bound, bound to the live UI's port, or withdrawn.
func TestUICrashWithdrawsThenRebinds(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	objs := render(t, "spark-submit")
	var podName, svcName, ns string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, ns = o.GetName(), o.GetNamespace()
			crashOnce(t, o)
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	n.PrepareNamespace(t, ns)
	tl := watchService(t, n, ns, svcName)
	ctx := testcluster.Context(t, 4*time.Minute)
	create(t, n, objs)

	listening := regexp.MustCompile(`listening (\d+) app`)
	first := logLine(t, n, ns, podName, "spark-kubernetes-driver", listening, 2*time.Minute)[1]
	testcluster.WaitFor(t, 60*time.Second, "bound to the first UI", func() (bool, string) {
		_, ok := tl.first(func(s svcState) bool { return s.TargetPort == first && len(s.Selector) > 0 && !isWithdrawn(s) })
		return ok, tl.String()
	})
	pod, err := n.Cluster.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withdrawn := map[string]string{"sparkui.dev/withdrawn": string(pod.UID)}

	crash := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`crash (\d+)`), 60*time.Second)
	ns64, _ := strconv.ParseInt(crash[1], 10, 64)
	crashed := time.Unix(0, ns64)
	var w svcState
	testcluster.WaitFor(t, 30*time.Second, "withdrawn after the crash", func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) })
		return ok, tl.String()
	})
	t.Logf("UI crash → withdrawn %s", w.At.Sub(crashed).Round(time.Millisecond))
	if d := w.At.Sub(crashed); d < 0 || d > time.Second {
		t.Errorf("withdrawn %s after the crash, want within a second (poll 100 ms); timeline:%s", d, tl)
	}

	// The kubelet restarts the container; the new UI's port is bound.
	var second string
	testcluster.WaitFor(t, 90*time.Second, "the restarted UI listening", func() (bool, string) {
		log, err := n.PodLog(ns, podName, "spark-kubernetes-driver")
		if err != nil {
			return false, err.Error()
		}
		m := listening.FindAllStringSubmatch(log, -1)
		if len(m) < 2 {
			return false, log
		}
		second = m[len(m)-1][1]
		return true, ""
	})
	testcluster.WaitFor(t, 60*time.Second, "bound again to the restarted UI", func() (bool, string) {
		s, ok := tl.first(func(s svcState) bool {
			return s.At.After(w.At) && s.TargetPort == second && len(s.Selector) > 0 && !isWithdrawn(s)
		})
		return ok, tl.String() + " " + s.String()
	})
	want := n.Gateway.String() + ":" + second + " ready=true"
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the restarted UI", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		if err != nil {
			return false, err.Error()
		}
		return len(eps) == 1 && eps[0] == want, strings.Join(eps, " ")
	})
	rebound, _ := tl.first(func(s svcState) bool { return s.At.After(w.At) && s.TargetPort == second && !isWithdrawn(s) })
	t.Logf("UI crash → bound again %s (the kubelet's restart included)", rebound.At.Sub(crashed).Round(time.Millisecond))

	// Between the crash and the rebind the Service selected nothing; before it, the first UI.
	for _, s := range tl.snapshot() {
		switch {
		case s.Gone, len(s.Selector) == 0, isWithdrawn(s):
		case s.At.Before(crashed) && s.TargetPort == first:
		case !s.At.Before(rebound.At) && s.TargetPort == second:
		default:
			t.Errorf("the Service selected the Pod on a port no UI was on: %s; timeline:%s", s, tl)
		}
	}
	t.Logf("timeline:%s", tl)
}

func isWithdrawn(s svcState) bool {
	for k := range s.Selector {
		if k == "sparkui.dev/withdrawn" {
			return true
		}
	}
	return false
}

// crashOnce makes the driver Pod restart its containers (restartPolicy Always) and tells the
// stand-in UI to crash once, 4 s after it starts, marking the crash on the driver's local-dir
// volume (an emptyDir, which outlives the container).
func crashOnce(t *testing.T, pod *unstructured.Unstructured) {
	t.Helper()
	if err := unstructured.SetNestedField(pod.Object, "Always", "spec", "restartPolicy"); err != nil {
		t.Fatal(err)
	}
	ctrs, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	for i, c := range ctrs {
		m := c.(map[string]any)
		if m["name"] != "spark-kubernetes-driver" {
			continue
		}
		var dir string
		mounts, _ := m["volumeMounts"].([]any)
		for _, vm := range mounts {
			if v := vm.(map[string]any); strings.HasPrefix(v["name"].(string), "spark-local-dir-") {
				dir = v["mountPath"].(string)
			}
		}
		if dir == "" {
			t.Fatal("the driver container mounts no spark-local-dir volume")
		}
		env, _ := m["env"].([]any)
		m["env"] = append(env,
			map[string]any{"name": "FAKESPARK_CRASH_AFTER", "value": "4s"},
			map[string]any{"name": "FAKESPARK_CRASH_MARK", "value": dir + "/crashed"})
		ctrs[i] = m
	}
	if err := unstructured.SetNestedSlice(pod.Object, ctrs, "spec", "containers"); err != nil {
		t.Fatal(err)
	}
}
