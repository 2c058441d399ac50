package nodetest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// uiState is the UI Service at one instant, with the Pod holding the binding.
type uiState struct {
	At         time.Time
	Selector   map[string]string
	TargetPort string
	BoundPod   string // sparkui.dev/bound-pod
	Owner      string // the ownerReference's UID (spark-submit)
	Gone       bool
}

func (s uiState) String() string {
	if s.Gone {
		return s.At.Format("15:04:05.000") + " deleted"
	}
	return fmt.Sprintf("%s selector=%v targetPort=%s bound-pod=%s owner=%s", s.At.Format("15:04:05.000"), s.Selector, s.TargetPort, s.BoundPod, s.Owner)
}

func (s uiState) withdrawnFor(uid string) bool {
	return len(s.Selector) == 1 && s.Selector["sparkui.dev/withdrawn"] == uid
}

type uiTimeline struct {
	mu     sync.Mutex
	states []uiState
}

func watchUI(t *testing.T, n *testnode.Node, ns, name string) *uiTimeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := n.Cluster.Client.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tl := &uiTimeline{}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			svc, ok := ev.Object.(*corev1.Service)
			if !ok {
				continue
			}
			st := uiState{At: now, Selector: svc.Spec.Selector, Gone: ev.Type == watch.Deleted, BoundPod: svc.Labels[sidecar.LabelBoundPod]}
			if len(svc.Spec.Ports) > 0 {
				st.TargetPort = svc.Spec.Ports[0].TargetPort.String()
			}
			if len(svc.OwnerReferences) > 0 {
				st.Owner = string(svc.OwnerReferences[0].UID)
			}
			tl.mu.Lock()
			tl.states = append(tl.states, st)
			tl.mu.Unlock()
		}
	}()
	t.Cleanup(cancel)
	return tl
}

func (tl *uiTimeline) snapshot() []uiState {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]uiState(nil), tl.states...)
}

func (tl *uiTimeline) first(ok func(uiState) bool) (uiState, bool) {
	for _, s := range tl.snapshot() {
		if ok(s) {
			return s, true
		}
	}
	return uiState{}, false
}

func (tl *uiTimeline) last() uiState {
	s := tl.snapshot()
	if len(s) == 0 {
		return uiState{}
	}
	return s[len(s)-1]
}

func (tl *uiTimeline) String() string {
	var b strings.Builder
	for _, s := range tl.snapshot() {
		b.WriteString("\n  " + s.String())
	}
	return b.String()
}

// awaitRun waits for a Running driver Pod picked by sel (not `not`), its UI listening, and the
// UI Service bound to it: targetPort the UI's port, a selector that picks exactly that Pod,
// held by it; then the EndpointSlice and the ClusterIP path.
func awaitRun(t *testing.T, n *testnode.Node, tl *uiTimeline, ns, svcName, sel string, not *corev1.Pod) run {
	t.Helper()
	c := n.Cluster
	ctx := testcluster.Context(t, 4*time.Minute)
	var r run
	testcluster.WaitFor(t, 3*time.Minute, "the driver Pod Running ("+sel+")", func() (bool, string) {
		opts := metav1.ListOptions{}
		if v, ok := strings.CutPrefix(sel, "label:"); ok {
			opts.LabelSelector = v
		} else {
			opts.FieldSelector = sel
		}
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			return false, err.Error()
		}
		var why []string
		for i := range l.Items {
			p := &l.Items[i]
			if (not != nil && p.UID == not.UID) || p.DeletionTimestamp != nil {
				continue
			}
			if p.Status.Phase == corev1.PodRunning {
				r.pod = p
				return true, ""
			}
			why = append(why, p.Name+": "+podWhy(p))
		}
		return false, strings.Join(why, "; ")
	})
	r.ctr = driverContainer(t, &r.pod.Spec)
	// By UID: a Pod made again under the same name (the SparkConnect server, a StatefulSet's
	// Pod) may start while its predecessor's log directory is still on the node.
	m := logLineOf(t, n, ns, r.pod.Name, string(r.pod.UID), r.ctr, regexp.MustCompile(`listening (\d+) app (\S+)`), 2*time.Minute)
	r.uiPort, r.appID = m[1], m[2]
	uid := string(r.pod.UID)
	testcluster.WaitFor(t, 90*time.Second, "the UI Service bound to "+r.pod.Name+" on "+r.uiPort, func() (bool, string) {
		var ok bool
		r.bound, ok = tl.first(func(s uiState) bool {
			return s.TargetPort == r.uiPort && (s.BoundPod == uid || s.Owner == uid) && len(s.Selector) > 0 && !s.withdrawnFor(uid)
		})
		return ok, tl.String()
	})
	// The selector picks exactly this Pod among the namespace's.
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(r.bound.Selector).String()})
	if err != nil {
		t.Fatal(err)
	}
	var picked []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			picked = append(picked, p.Name)
		}
	}
	if len(picked) != 1 || picked[0] != r.pod.Name {
		t.Errorf("the bound selector %v picks %v, want only %s", r.bound.Selector, picked, r.pod.Name)
	}
	ip := r.pod.Status.PodIP
	if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, r.pod.Name, metav1.GetOptions{}); err == nil {
		ip = p.Status.PodIP
	}
	want := fmt.Sprintf("%s:%s ready=true pod=%s/%s port=spark-ui", ip, r.uiPort, r.pod.Name, r.pod.UID)
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the UI ("+want+")", func() (bool, string) {
		eps, err := sliceTargets(ctx, n, ns, svcName)
		if err != nil {
			return false, err.Error()
		}
		return len(eps) == 1 && eps[0] == want, strings.Join(eps, " ")
	})
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	front := fmt.Sprintf("http://%s:%d/api/v1/applications", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	testcluster.WaitFor(t, 30*time.Second, "the UI through the ClusterIP "+front, func() (bool, string) {
		code, body, err := get(t, n, front)
		if err != nil {
			return false, err.Error()
		}
		return code == 200 && strings.Contains(body, `"id":"`+r.appID+`"`) && strings.Contains(body, `"completed":false`), fmt.Sprintf("%d %s", code, body)
	})
	t.Logf("bound: %s → EndpointSlice %s, GET %s answers app %s", r.bound, want, front, r.appID)
	return r
}

// sliceTargets lists the Service's EndpointSlice endpoints as "ip:port ready=bool
// pod=<name>/<uid> port=<name>": which Pod each endpoint is, not only its address.
func sliceTargets(ctx context.Context, n *testnode.Node, ns, svc string) ([]string, error) {
	l, err := n.Cluster.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			for _, p := range s.Ports {
				ready := e.Conditions.Ready != nil && *e.Conditions.Ready
				ref := "none"
				if e.TargetRef != nil {
					ref = e.TargetRef.Name + "/" + string(e.TargetRef.UID)
				}
				port, name := int32(0), ""
				if p.Port != nil {
					port = *p.Port
				}
				if p.Name != nil {
					name = *p.Name
				}
				out = append(out, fmt.Sprintf("%s:%d ready=%t pod=%s port=%s", strings.Join(e.Addresses, ","), port, ready, ref, name))
			}
		}
	}
	return out, nil
}
