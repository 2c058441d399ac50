package blackbox

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// uiStatus reads the UI Service's status annotations (docs/service-status.md), checks they
// say state about pod (and port when bound), and returns them as one line for keptStatus.
func uiStatus(t *testing.T, c *testcluster.Cluster, ns, svc, state, pod string, port int) string {
	t.Helper()
	got := statusLine(t, c, ns, svc)
	want := "ui-state=" + state + " ui-pod=" + pod
	if port > 0 {
		want += " ui-port=" + strconv.Itoa(port)
	}
	if !strings.HasPrefix(got, want+" ") {
		t.Fatalf("status annotations %q, want them to start with %q", got, want)
	}
	return got
}

// keptStatus fails when a re-apply changed the status annotations.
func keptStatus(t *testing.T, c *testcluster.Cluster, ns, svc, want, when string) {
	t.Helper()
	if got := statusLine(t, c, ns, svc); got != want {
		t.Fatalf("%s: status annotations %q, want them kept: %q", when, got, want)
	}
}

func statusLine(t *testing.T, c *testcluster.Cluster, ns, svc string) string {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return statusOf(s)
}

// statusOf is s's status annotations as one line.
func statusOf(s *corev1.Service) string {
	var kv []string
	for _, k := range []string{names.AnnotationUIState, names.AnnotationUIPod, names.AnnotationUIPort, names.AnnotationUIReason, names.AnnotationUISince} {
		if v, ok := s.Annotations[k]; ok {
			kv = append(kv, fmt.Sprintf("%s=%s", strings.TrimPrefix(k, names.AnnotationPrefix), v))
		}
	}
	return strings.Join(kv, " ")
}

// writeWaiting writes the waiting state as a runtime that cannot bind writes it (runtime/binder
// Client.Waiting: its guarded JSON Patch, with the driver's ServiceAccount, under the runtime's
// field manager), without the runtime's 30 s wait before its first write, and returns the
// status line.
func writeWaiting(t *testing.T, c *testcluster.Cluster, ns, svc, appID string, pod *corev1.Pod) string {
	t.Helper()
	cl, err := binder.NewClient(c.ServiceAccountConfig(t, ns, "spark"), binder.Target{
		Namespace: ns, Service: svc, AppID: appID, PortName: names.UIPortName, PodName: pod.Name, PodUID: string(pod.UID),
		Selector: binder.DefaultSelector(appID),
	})
	if err != nil {
		t.Fatal(err)
	}
	st := binder.State{State: names.UIStateWaiting, Since: time.Now(), Pod: pod.Name, Reason: "port 4040: TLS the runtime cannot verify"}
	if got, err := cl.Waiting(testcluster.Context(t, 10*time.Second), st); got != binder.WaitingWritten || err != nil {
		t.Fatalf("the waiting state: %v %v", got, err)
	}
	return uiStatus(t, c, ns, svc, names.UIStateWaiting, pod.Name, 0)
}
