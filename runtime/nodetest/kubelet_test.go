package nodetest

import (
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// boundDriver renders and creates the spark-submit example on n and waits for the bind. It
// returns the Pod's namespace and name, the UI Service's name, the UI's port and the timeline.
func boundDriver(t *testing.T, n *testnode.Node) (ns, podName, svcName, uiPort string, tl *timeline) {
	t.Helper()
	objs := render(t, "spark-submit")
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, ns = o.GetName(), o.GetNamespace()
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	n.PrepareNamespace(t, ns)
	tl = watchService(t, n, ns, svcName)
	create(t, n, objs)
	uiPort = logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`listening (\d+) app`), 2*time.Minute)[1]
	want := n.Gateway.String() + ":" + uiPort + " ready=true"
	ctx := testcluster.Context(t, 2*time.Minute)
	testcluster.WaitFor(t, 90*time.Second, "bound, the EndpointSlice on the UI", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		if err != nil {
			return false, err.Error()
		}
		_, ok := tl.first(func(s svcState) bool { return s.TargetPort == uiPort && len(s.Selector) > 0 })
		return ok && len(eps) == 1 && eps[0] == want, tl.String() + " " + strings.Join(eps, " ")
	})
	return ns, podName, svcName, uiPort, tl
}

// TestKubeletRestartLeavesTheBinding: the kubelet restarts while the driver runs (an
// upgrade, a crash of the kubelet). The containers run on and the Service stays bound to the
// UI throughout (its selector and targetPort never change); the restarted kubelet runs the
// sidecar's startupProbe again, so the endpoint is briefly not Ready (measured, must end);
// after the restart the kubelet still runs the preStop hook on deletion: withdrawn before the
// UI's SIGTERM.
func TestKubeletRestartLeavesTheBinding(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	ns, podName, svcName, uiPort, tl := boundDriver(t, n)
	ctx := testcluster.Context(t, 3*time.Minute)
	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := len(tl.snapshot())
	if err := n.RestartKubelet(); err != nil {
		t.Fatal(err)
	}
	// The restarted kubelet runs the sidecar's startupProbe again: until it passes, the Pod is
	// not Ready and the endpoint turns not Ready (no traffic), then Ready again on the same UI.
	// The endpoint never names anything else.
	restarted := time.Now()
	want := n.Gateway.String() + ":" + uiPort
	var sawNotReady, readyAgain time.Duration
	for time.Since(restarted) < 60*time.Second {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		if err != nil || len(eps) != 1 || !strings.HasPrefix(eps[0], want+" ") {
			t.Fatalf("EndpointSlice after the kubelet's restart: %v %v", eps, err)
		}
		if strings.HasSuffix(eps[0], "ready=false") && sawNotReady == 0 {
			sawNotReady = time.Since(restarted)
		}
		if strings.HasSuffix(eps[0], "ready=true") && sawNotReady > 0 {
			readyAgain = time.Since(restarted)
			break
		}
		if sawNotReady == 0 && time.Since(restarted) > 15*time.Second {
			break // never went not Ready
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sawNotReady > 0 && readyAgain == 0 {
		t.Fatalf("the endpoint did not turn Ready again within a minute of the kubelet's restart")
	}
	t.Logf("kubelet restarted: endpoint not Ready from %s to %s after the restart (startupProbe run again)", sawNotReady.Round(time.Millisecond), readyAgain.Round(time.Millisecond))
	if after := tl.snapshot(); len(after) != before {
		t.Errorf("the Service changed across the kubelet's restart:%s", tl)
	}
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if cs.RestartCount != 0 {
			t.Errorf("container %s restarted across the kubelet's restart (%d)", cs.Name, cs.RestartCount)
		}
	}
	code, body, err := get(t, n, "http://"+n.Gateway.String()+":"+uiPort+"/api/v1/applications")
	if err != nil || code != 200 {
		t.Errorf("the UI after the kubelet's restart: %d %s %v", code, body, err)
	}

	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`SIGTERM (\d+)`), 60*time.Second)
	withdrawn := map[string]string{"sparkui.dev/withdrawn": string(pod.UID)}
	testcluster.WaitFor(t, 30*time.Second, "withdrawn", func() (bool, string) {
		_, ok := tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) })
		return ok, tl.String()
	})
	withdrawnAtSigterm(t, n, ns, podName, string(pod.UID), tl)
	t.Logf("timeline:%s", tl)
}

// TestNodeStopsReporting: the kubelet is killed and stays down (a node lost: its containers
// may still run, nothing reports them). Measured and asserted: the Service keeps its
// selector (no runtime can be told anything), and the node lifecycle controller's default
// grace (node-monitor-grace-period) later marks the node unknown and the Pod not Ready, so the
// EndpointSlice's endpoint turns not Ready: kube-proxy stops routing to it. Until then the
// endpoint is the UI, which still runs and answers as this application.
func TestNodeStopsReporting(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	ns, podName, svcName, uiPort, tl := boundDriver(t, n)
	ctx := testcluster.Context(t, 4*time.Minute)
	before := len(tl.snapshot())
	stopped := time.Now()
	n.StopKubelet()

	notReady := n.Gateway.String() + ":" + uiPort + " ready=false"
	testcluster.WaitFor(t, 3*time.Minute, "the endpoint not Ready", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		if err != nil {
			return false, err.Error()
		}
		if len(eps) == 1 && strings.HasSuffix(eps[0], "ready=true") {
			// Still routed: it must still be this application's live UI.
			code, body, err := get(t, n, "http://"+n.Gateway.String()+":"+uiPort+"/api/v1/applications")
			if err != nil || code != 200 || !strings.Contains(body, `"completed":false`) {
				t.Fatalf("the endpoint is Ready but the UI does not answer as a live application: %d %s %v", code, body, err)
			}
		}
		return len(eps) == 1 && eps[0] == notReady, strings.Join(eps, " ")
	})
	t.Logf("kubelet killed → endpoint not Ready %s (node lifecycle controller, default grace)", time.Since(stopped).Round(time.Second))
	if after := tl.snapshot(); len(after) != before {
		t.Errorf("the Service changed with the node down (nothing there can change it):%s", tl)
	}
	if _, err := n.Cluster.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{}); err != nil {
		t.Errorf("the Pod: %v", err)
	}
}
