package nodetest

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// oomLimit is the driver container's memory limit in TestUIOOMKilledWithdrawsThenRebinds: the
// stand-in UI runs in about 10 MiB, so its allocation reaches the limit within milliseconds.
const oomLimit = 48 << 20

// TestUIOOMKilledWithdrawsThenRebinds: the driver is OOM-killed while its UI is bound — the
// kernel's OOM killer at the container's memory cgroup limit, the way a JVM over its limit
// dies: SIGKILL, no preStop hook, no SIGTERM. The function's spark-submit output with
// test-only changes: restartPolicy Always (a Deployment's driver Pod restarts its containers),
// the driver container's memory 48Mi (request = limit), and the stand-in told to allocate
// without bound once, 4 s after it starts. Asserted:
//   - the limit is really set on the container's memory cgroup (cgroup v1
//     memory.limit_in_bytes under the node's cgroup root), and the kubelet reports the
//     container's last state terminated, reason OOMKilled, exit code 137, and restarts it;
//   - the Service (a watch): bound to the first UI → withdrawn (sparkui.dev/withdrawn: <Pod
//     UID>) within a second of the kill (the test watches the process from the host; the
//     runtime's 100 ms poll sees the bound socket gone) → bound to the restarted UI's new
//     port; nothing else in between;
//   - the EndpointSlice (sampled every 50 ms): the first UI, then no endpoint, then the
//     restarted UI; never the first UI's port once the second appeared, and never two.
func TestUIOOMKilledWithdrawsThenRebinds(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	objs := render(t, "spark-submit")
	var podName, svcName, ns string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, ns = o.GetName(), o.GetNamespace()
			if err := unstructured.SetNestedField(o.Object, "Always", "spec", "restartPolicy"); err != nil {
				t.Fatal(err)
			}
			editDriver(t, o, func(ctr map[string]any, dir string) {
				mem := strconv.Itoa(oomLimit)
				ctr["resources"] = map[string]any{
					"requests": map[string]any{"cpu": "500m", "memory": mem},
					"limits":   map[string]any{"memory": mem},
				}
				addEnv(ctr, "FAKESPARK_OOM_AFTER", "4s", "FAKESPARK_CRASH_MARK", dir+"/oom-killed")
			})
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	n.PrepareNamespace(t, ns)
	tl := watchService(t, n, ns, svcName)
	slices := sampleSlices(t, n, ns, svcName)
	ctx := testcluster.Context(t, 5*time.Minute)
	create(t, n, objs)

	listening := regexp.MustCompile(`listening (\d+) app`)
	first := logLine(t, n, ns, podName, "spark-kubernetes-driver", listening, 2*time.Minute)[1]
	testcluster.WaitFor(t, 60*time.Second, "bound to the first UI", func() (bool, string) {
		_, ok := tl.first(func(s svcState) bool { return s.TargetPort == first && len(s.Selector) > 0 && !isWithdrawn(s) })
		return ok, tl.String()
	})
	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var driverID string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == "spark-kubernetes-driver" {
			driverID = cs.ContainerID
		}
	}
	// The limit is enforced by the kernel only if the kubelet wrote it to the container's
	// memory cgroup: read it there (cgroup v1, the node's own root).
	lim, err := n.ContainerCgroupFile("memory", string(pod.UID), driverID, "memory.limit_in_bytes")
	if err != nil {
		t.Fatalf("the driver container's memory cgroup: %v", err)
	}
	if lim != strconv.Itoa(oomLimit) {
		t.Fatalf("memory.limit_in_bytes of the driver container = %s, want %d", lim, oomLimit)
	}
	withdrawn := map[string]string{"sparkui.dev/withdrawn": string(pod.UID)}
	// When the kernel killed it: its processes watched from the host until none is left
	// (gone from /proc, or a zombie awaiting its reaper).
	procs, err := n.ContainerCgroupFile("memory", string(pod.UID), driverID, "cgroup.procs")
	if err != nil || procs == "" {
		t.Fatalf("the driver container's processes: %q %v", procs, err)
	}
	killed := make(chan time.Time, 1)
	go func() {
		for {
			alive := false
			for _, p := range strings.Fields(procs) {
				st, err := os.ReadFile("/proc/" + p + "/stat")
				// The state follows the command in parentheses: "pid (comm) S …".
				if i := strings.LastIndexByte(string(st), ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
					alive = true
				}
			}
			if !alive {
				killed <- time.Now()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	oom := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`oom (\d+)`), 60*time.Second)
	ns64, _ := strconv.ParseInt(oom[1], 10, 64)
	allocating := time.Unix(0, ns64)
	var w svcState
	testcluster.WaitFor(t, 30*time.Second, "withdrawn after the OOM kill", func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) })
		return ok, tl.String()
	})
	var died time.Time
	select {
	case died = <-killed:
	case <-time.After(30 * time.Second):
		t.Fatal("the driver container's process still alive 30 s after the allocation began")
	}
	t.Logf("allocation start → OOM kill %s; OOM kill → withdrawn %s", died.Sub(allocating).Round(time.Millisecond), w.At.Sub(died).Round(time.Millisecond))
	if d := w.At.Sub(died); d > time.Second {
		t.Errorf("withdrawn %s after the OOM kill, want within a second (the runtime polls every 100 ms); timeline:%s", d, tl)
	}

	// The kubelet saw an OOM kill and restarted the container.
	testcluster.WaitFor(t, 90*time.Second, "the driver container restarted after an OOM kill", func() (bool, string) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "spark-kubernetes-driver" {
				continue
			}
			last := cs.LastTerminationState.Terminated
			if last != nil && cs.RestartCount >= 1 && cs.State.Running != nil {
				if last.Reason != "OOMKilled" || last.ExitCode != 137 {
					t.Fatalf("the driver container's last state: reason %q exit code %d, want OOMKilled 137", last.Reason, last.ExitCode)
				}
				return true, ""
			}
		}
		return false, podWhy(p)
	})
	if log, _ := n.PodLog(ns, podName, "spark-kubernetes-driver"); strings.Contains(log, "oom not killed") {
		t.Fatalf("the stand-in allocated past its limit without being killed:\n%s", log)
	}

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
		_, ok := tl.first(func(s svcState) bool {
			return s.At.After(w.At) && s.TargetPort == second && len(s.Selector) > 0 && !isWithdrawn(s)
		})
		return ok, tl.String()
	})
	rebound, _ := tl.first(func(s svcState) bool { return s.At.After(w.At) && s.TargetPort == second && !isWithdrawn(s) })
	t.Logf("OOM → bound again %s (the kubelet's restart included)", rebound.At.Sub(allocating).Round(time.Millisecond))
	gw := n.Gateway.String()
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the restarted UI", func() (bool, string) {
		_, ok := slices.first(rebound.At, func(eps []string) bool { return len(eps) == 1 && eps[0] == gw+":"+second+" ready=true" })
		return ok, slices.String()
	})
	if empty, ok := slices.first(allocating, func(eps []string) bool { return len(eps) == 0 }); ok {
		t.Logf("OOM → EndpointSlice empty %s", empty.At.Sub(allocating).Round(time.Millisecond))
	} else {
		t.Errorf("the EndpointSlice was never seen empty between the OOM kill and the rebind:%s", slices)
	}
	code, body, err := get(t, n, "http://"+gw+":"+second+"/api/v1/applications")
	if err != nil || code != 200 || !strings.Contains(body, `"id":"`+pod.Labels["spark-app-selector"]+`"`) {
		t.Errorf("the restarted UI does not answer as the application: %d %s %v", code, body, err)
	}

	// The Service: not bound, the first UI (before the kill), withdrawn, the second UI.
	for _, s := range tl.snapshot() {
		switch {
		case s.Gone, len(s.Selector) == 0, isWithdrawn(s):
		case s.At.Before(allocating) && s.TargetPort == first:
		case !s.At.Before(rebound.At) && s.TargetPort == second:
		default:
			t.Errorf("the Service selected the Pod on a port no UI was on: %s; timeline:%s", s, tl)
		}
	}
	// The EndpointSlice: one endpoint at most, the first UI's only until the second appears.
	sawSecond := false
	for _, s := range slices.snapshot() {
		switch {
		case len(s.Eps) == 0:
		case only(s.Eps, gw+":"+first) && !sawSecond:
		case only(s.Eps, gw+":"+second) && !s.At.Before(rebound.At):
			sawSecond = true
		default:
			t.Errorf("the EndpointSlice routed elsewhere: %s; samples:%s", s, slices)
		}
	}
	t.Logf("Service timeline:%s\nEndpointSlice samples:%s", tl, slices)
}
