package nodetest

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// watchAppStates records every state the API server stores for the SparkApplication app,
// from a watch started now.
func watchAppStates(t *testing.T, n *testnode.Node, app *unstructured.Unstructured) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := n.Cluster.Dynamic.Resource(sparkAppGVR).Namespace(app.GetNamespace()).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + app.GetName()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				s, _, _ := unstructured.NestedString(u.Object, "status", "applicationState", "state")
				mu.Lock()
				if s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
					seen = append(seen, s)
				}
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// untouched asserts r's Pod is the same Pod, no container restarted, still bound.
func untouched(t *testing.T, n *testnode.Node, tl *uiTimeline, r run) {
	t.Helper()
	p, err := n.Cluster.Client.CoreV1().Pods(r.pod.Namespace).Get(context.Background(), r.pod.Name, metav1.GetOptions{})
	if err != nil || p.UID != r.pod.UID {
		t.Fatalf("driver Pod %s after the change: %v", r.pod.Name, err)
	}
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if cs.RestartCount != 0 {
			t.Errorf("container %s restarted %d times", cs.Name, cs.RestartCount)
		}
	}
	// Still bound to r's Pod ever since its bind (a spark-submit Pod holds it by its
	// ownerReference, the others by the bound-pod label).
	uid := string(r.pod.UID)
	for _, s := range tl.snapshot() {
		if !s.At.Before(r.bound.At) && (s.Gone || len(s.Selector) == 0 || s.Selector["sparkui.dev/withdrawn"] != "" || (s.BoundPod != uid && s.Owner != uid)) {
			t.Errorf("after the refused change the Service left %s's binding: %s; timeline:%s", r.pod.Name, s, tl)
		}
	}
}

// refused: the API server's answer is Invalid at a field the report's path lies under, and
// the running driver is left as it was.
func refused(t *testing.T, n *testnode.Node, tl *uiTimeline, r run, err error, f finding) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server took the change; the report said %s: %s", f.Rule, f.Message)
	}
	var fields []string
	if se, ok := err.(apierrors.APIStatus); ok && apierrors.IsInvalid(err) && se.Status().Details != nil {
		for _, c := range se.Status().Details.Causes {
			fields = append(fields, c.Field)
		}
	}
	under := slices.ContainsFunc(fields, func(p string) bool {
		return p != "" && (f.Field.Path == p || strings.HasPrefix(f.Field.Path, p+".") || strings.HasPrefix(f.Field.Path, p+"["))
	})
	if !under {
		t.Errorf("the API server refused at %v (%v); the report's path %s lies under none", fields, err, f.Field.Path)
	}
	time.Sleep(2 * time.Second) // anything the refusal could have set off has had its time
	untouched(t, n, tl, r)
	t.Logf("node: refused by the API server at %v: %v; the driver %s left running and bound", fields, err, r.pod.Name)
}

// sidecarRestarted: a bare Pod's image change is taken in place and the kubelet restarts the
// sparkui-runtime container with the new image (the driver container untouched); the
// restarting runtime withdraws the Service for its Pod, the new one binds it again.
func sidecarRestarted(t *testing.T, n *testnode.Node, tl *uiTimeline, r run, applied time.Time) {
	t.Helper()
	ctx := testcluster.Context(t, 3*time.Minute)
	testcluster.WaitFor(t, 2*time.Minute, "the sidecar restarted with "+RuntimeImage2, func() (bool, string) {
		p, err := n.Cluster.Client.CoreV1().Pods(r.pod.Namespace).Get(ctx, r.pod.Name, metav1.GetOptions{})
		if err != nil || p.UID != r.pod.UID {
			t.Fatalf("driver Pod %s after the change: %v", r.pod.Name, err)
		}
		// The status names the image by a tag of its content, which both tags share here (the
		// same runtime binary): the spec's is the one that changed.
		if runtimeImageOf(t, p) != RuntimeImage2 {
			t.Fatalf("the Pod's sparkui-runtime image is %s after the change", runtimeImageOf(t, p))
		}
		for _, cs := range p.Status.InitContainerStatuses {
			if cs.Name == sidecar.ContainerName {
				return cs.RestartCount >= 1 && cs.State.Running != nil, podWhy(p)
			}
		}
		return false, podWhy(p)
	})
	uid := string(r.pod.UID)
	var w, b uiState
	testcluster.WaitFor(t, time.Minute, "withdrawn, then bound again to "+r.pod.Name, func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s uiState) bool { return s.At.After(applied) && s.withdrawnFor(uid) })
		if !ok {
			return false, tl.String()
		}
		b, ok = tl.first(func(s uiState) bool {
			return s.At.After(w.At) && (s.BoundPod == uid || s.Owner == uid) && s.TargetPort == r.uiPort && equal(s.Selector, r.bound.Selector)
		})
		return ok, tl.String()
	})
	p, err := n.Cluster.Client.CoreV1().Pods(r.pod.Namespace).Get(ctx, r.pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount != 0 {
			t.Errorf("the driver container %s restarted %d times: only the sidecar should", cs.Name, cs.RestartCount)
		}
	}
	t.Logf("node: image change taken in place; sidecar restarted with %s: withdrawn %s after the apply, bound again %s later (the gap)",
		RuntimeImage2, w.At.Sub(applied).Round(time.Millisecond), b.At.Sub(w.At).Round(time.Millisecond))
}

// endsByItself: the running driver keeps its image and nothing restarts it; its application
// ends by itself, the Service is withdrawn within a poll, the Pod Succeeded.
func endsByItself(t *testing.T, n *testnode.Node, tl *uiTimeline, r run) {
	t.Helper()
	if img := runtimeImageOf(t, r.pod); img != RuntimeImage {
		t.Errorf("the running driver's runtime is %s", img)
	}
	fin := logLineOf(t, n, r.pod.Namespace, r.pod.Name, string(r.pod.UID), r.ctr, regexp.MustCompile(`finished (\d+)`), 2*time.Minute)
	ns64, _ := strconv.ParseInt(fin[1], 10, 64)
	end := time.Unix(0, ns64)
	uid := string(r.pod.UID)
	var w uiState
	testcluster.WaitFor(t, 30*time.Second, "withdrawn after the application's end", func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s uiState) bool { return s.withdrawnFor(uid) })
		return ok, tl.String()
	})
	if d := w.At.Sub(end); d > time.Second {
		t.Errorf("withdrawn %s after the UI closed, want within a second", d)
	}
	testcluster.WaitFor(t, 90*time.Second, "the running driver Succeeded, never restarted", func() (bool, string) {
		p, err := n.Cluster.Client.CoreV1().Pods(r.pod.Namespace).Get(context.Background(), r.pod.Name, metav1.GetOptions{})
		if err != nil || p.UID != r.pod.UID {
			t.Fatalf("driver Pod %s: %v (deleted before its end?)", r.pod.Name, err)
		}
		for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			if cs.RestartCount != 0 {
				t.Fatalf("container %s restarted", cs.Name)
			}
		}
		return p.Status.Phase == corev1.PodSucceeded, podWhy(p)
	})
	routedOnlyTo(t, tl, r, w)
}
