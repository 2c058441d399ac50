package nodetest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestRuntimeCrashRebindsOnce: the runtime container itself is killed (SIGKILL, no SIGTERM:
// it cannot withdraw) while its UI lives on. The UI still answers on the bound port, so the
// Service rightly keeps routing there; the kubelet restarts the native sidecar, whose new
// instance binds the same UI again: one selector, this Pod's, the same targetPort, and one
// ownerReference (this Pod), never two. The restarted instance then serves the preStop hook:
// `delete pod` still withdraws before the UI's SIGTERM.
func TestRuntimeCrashRebindsOnce(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	objs := render(t, "spark-submit")
	var podName, svcName, ns string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, ns = o.GetName(), o.GetNamespace()
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	n.PrepareNamespace(t, ns)
	tl := watchService(t, n, ns, svcName)
	ctx := testcluster.Context(t, 4*time.Minute)
	create(t, n, objs)

	uiPort := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`listening (\d+) app`), 2*time.Minute)[1]
	testcluster.WaitFor(t, 60*time.Second, "bound to the UI", func() (bool, string) {
		_, ok := tl.first(func(s svcState) bool { return s.TargetPort == uiPort && len(s.Selector) > 0 })
		return ok, tl.String()
	})
	var pod *corev1.Pod
	testcluster.WaitFor(t, 30*time.Second, "the runtime container's id", func() (bool, string) {
		var err error
		pod, err = c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := pod.Status.InitContainerStatuses
		return len(st) == 1 && st[0].ContainerID != "" && st[0].State.Running != nil, ""
	})
	// Kill only once the first instance has recorded its bind on the shared volume
	// (internal/sidecar StatePath, written right after the API server's answer): the watch can
	// see the bind before a runtime descheduled on a loaded machine records it, and a kill in
	// between leaves the new instance nothing to take over (it binds afresh).
	state := filepath.Join(n.Dir, "kubelet", "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", "sparkui-runtime", filepath.Base(sidecar.StatePath))
	testcluster.WaitFor(t, 30*time.Second, "the runtime's record of its bind "+state, func() (bool, string) {
		b, err := os.ReadFile(state)
		return err == nil && strings.TrimSpace(string(b)) == uiPort, fmt.Sprintf("%q %v", b, err)
	})
	boundSelector := map[string]string{}
	if s, ok := tl.first(func(s svcState) bool { return s.TargetPort == uiPort && len(s.Selector) > 0 }); ok {
		boundSelector = s.Selector
	}

	killed := time.Now()
	if err := n.KillContainer(string(pod.UID), pod.Status.InitContainerStatuses[0].ContainerID); err != nil {
		t.Fatal(err)
	}
	// The kubelet restarts the sidecar (restartCount 1, running again).
	testcluster.WaitFor(t, 90*time.Second, "the runtime restarted", func() (bool, string) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := p.Status.InitContainerStatuses
		return len(st) == 1 && st[0].RestartCount >= 1 && st[0].State.Running != nil, podWhy(p)
	})
	t.Logf("runtime killed → running again %s", time.Since(killed).Round(time.Millisecond))
	// The new instance takes the binding over from the state its predecessor left on the
	// shared volume (runtime/agent: "a previous run bound the UI Service"): its log, after
	// the first instance's "UI Service bound", says so.
	boundLine := regexp.MustCompile(`a previous run bound the UI Service|UI Service bound`)
	testcluster.WaitFor(t, 60*time.Second, "the restarted runtime holding the binding", func() (bool, string) {
		log, err := n.PodLog(ns, podName, "sparkui-runtime")
		if err != nil {
			return false, err.Error()
		}
		return len(boundLine.FindAllString(log, -1)) >= 2, log
	})
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Ports[0].TargetPort.String(); got != uiPort {
		t.Errorf("targetPort %s after the restart, want the UI's %s", got, uiPort)
	}
	if !equal(svc.Spec.Selector, boundSelector) {
		t.Errorf("selector %v after the restart, want %v", svc.Spec.Selector, boundSelector)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != pod.UID {
		t.Errorf("ownerReferences %+v, want exactly this Pod", svc.OwnerReferences)
	}
	// While the runtime was down the UI lived: the Service never left it.
	for _, s := range tl.snapshot() {
		if len(s.Selector) > 0 && !(s.TargetPort == uiPort && equal(s.Selector, boundSelector)) {
			t.Errorf("the Service changed while the UI lived: %s; timeline:%s", s, tl)
		}
	}

	// The restarted instance serves the preStop hook.
	deleted := time.Now()
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sig := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`SIGTERM (\d+)`), 60*time.Second)
	ns64, _ := strconv.ParseInt(sig[1], 10, 64)
	sigterm := time.Unix(0, ns64)
	withdrawn := map[string]string{"sparkui.dev/withdrawn": string(pod.UID)}
	var w svcState
	testcluster.WaitFor(t, 30*time.Second, "withdrawn", func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s svcState) bool { return equal(s.Selector, withdrawn) })
		return ok, tl.String()
	})
	withdrawnAtSigterm(t, n, ns, podName, string(pod.UID), tl)
	t.Logf("after the runtime's restart: delete → withdrawn %s, margin before the UI's SIGTERM %s",
		w.At.Sub(deleted).Round(time.Millisecond), sigterm.Sub(w.At).Round(time.Millisecond))
	t.Logf("timeline:%s", tl)
}
