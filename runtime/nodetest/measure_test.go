package nodetest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// measureRuns is how many applications TestRuntimeCostOnNode runs one after the other.
const measureRuns = 3

// idleWindow is how long the runtime's CPU time is read while it watches a bound UI.
const idleWindow = 10 * time.Second

// TestRuntimeCostOnNode measures what docs/performance.md publishes, on one node: measureRuns
// applications of examples/spark-submit (each in a namespace of its own), each applied, bound,
// and deleted as a user deletes it. Per run: apply → bound (the watch's receipt of the
// selector and targetPort), delete → withdrawn (receipt), delete → the UI's SIGTERM (the
// stand-in's clock in its handler) and their difference, the margin. On the first run, the
// runtime container's CPU time (cgroup v1 cpuacct.usage) over idleWindow while it watches the
// bound UI, and its memory (memory.stat total_rss, memory.max_usage_in_bytes).
//
// Asserted (what must hold whatever the machine's load): each run's Service withdrawn before
// its UI's SIGTERM, proved by the stand-in's own request to the API server in its SIGTERM
// handler; the runtime's cgroup below its 64Mi limit; the runtime watching a bound UI uses
// under 5% of one CPU.
func TestRuntimeCostOnNode(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	cfg, base := example(t, "spark-submit/fn-config.yaml"), example(t, "spark-submit/manifests.yaml")
	var bound, withdrawn, sigterm, margin []time.Duration
	for i := 1; i <= measureRuns; i++ {
		ns := fmt.Sprintf("analytics-%d", i)
		objs := renderInput(t, cfg, strings.ReplaceAll(base, "analytics", ns))
		var podName, svcName string
		for _, o := range objs {
			switch {
			case o.GetKind() == "Pod":
				podName = o.GetName()
			case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
				svcName = o.GetName()
			}
		}
		n.PrepareNamespace(t, ns)
		tl := watchService(t, n, ns, svcName)
		ctx := testcluster.Context(t, 3*time.Minute)
		applied := time.Now()
		create(t, n, objs)
		uiPort := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`listening (\d+) app`), 2*time.Minute)[1]
		var b svcState
		testcluster.WaitFor(t, 90*time.Second, "bound", func() (bool, string) {
			var ok bool
			b, ok = tl.first(func(s svcState) bool { return s.TargetPort == uiPort && len(s.Selector) > 0 && !isWithdrawn(s) })
			return ok, tl.String()
		})
		bound = append(bound, b.At.Sub(applied))
		pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}

		if i == 1 {
			rt := pod.Status.InitContainerStatuses
			if len(rt) != 1 || rt[0].ContainerID == "" {
				t.Fatalf("no runtime container: %+v", rt)
			}
			uid, id := string(pod.UID), rt[0].ContainerID
			cpu0, err := n.ContainerCPU(uid, id)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			time.Sleep(idleWindow)
			cpu1, err := n.ContainerCPU(uid, id)
			if err != nil {
				t.Fatal(err)
			}
			share := float64(cpu1-cpu0) / float64(time.Since(t0))
			rss, peak, err := n.ContainerMemory(uid, id)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("runtime watching a bound UI: CPU %.2f%% of one core over %s (%s of CPU time; %s since its start); RSS %.1f MiB, cgroup peak %.1f MiB (limit 64 MiB)",
				100*share, idleWindow, time.Duration(cpu1-cpu0).Round(time.Microsecond), time.Duration(cpu1).Round(time.Millisecond),
				float64(rss)/(1<<20), float64(peak)/(1<<20))
			if share > 0.05 {
				t.Errorf("the runtime used %.1f%% of a CPU watching a bound UI, want under 5%%", 100*share)
			}
			if peak >= 64<<20 {
				t.Errorf("the runtime's cgroup peaked at %d bytes, at its 64Mi limit", peak)
			}
		}

		deleted := time.Now()
		if err := c.Client.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		sig := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`SIGTERM (\d+)`), 60*time.Second)
		ns64, _ := strconv.ParseInt(sig[1], 10, 64)
		at := time.Unix(0, ns64)
		w := map[string]string{"sparkui.dev/withdrawn": string(pod.UID)}
		var ws svcState
		testcluster.WaitFor(t, 30*time.Second, "withdrawn", func() (bool, string) {
			var ok bool
			ws, ok = tl.first(func(s svcState) bool { return equal(s.Selector, w) })
			return ok, tl.String()
		})
		withdrawnAtSigterm(t, n, ns, podName, string(pod.UID), tl)
		withdrawn = append(withdrawn, ws.At.Sub(deleted))
		sigterm = append(sigterm, at.Sub(deleted))
		margin = append(margin, at.Sub(ws.At))
		t.Logf("run %d: apply → bound %s; delete → withdrawn %s, delete → UI SIGTERM %s, margin %s", i,
			bound[i-1].Round(time.Millisecond), withdrawn[i-1].Round(time.Millisecond), sigterm[i-1].Round(time.Millisecond), margin[i-1].Round(time.Millisecond))
	}
	t.Logf("over %d runs: apply → bound %s; delete → withdrawn %s; delete → UI SIGTERM %s; margin %s",
		measureRuns, spread(bound), spread(withdrawn), spread(sigterm), spread(margin))
}

// spread is "min–max (median)" of ds, rounded to milliseconds.
func spread(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%s–%s (median %s)", r(s[0]), r(s[len(s)-1]), r(s[len(s)/2]))
}
