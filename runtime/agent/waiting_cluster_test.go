package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// The waiting state (docs/service-status.md): written while the runtime cannot bind, once per
// change of reason and at most once per interval, never on a Service another Pod routes.

const waitingInterval = time.Second

// waitingConfig is a Pod-network runtime whose only candidate is port, with a short interval.
func waitingConfig(t testing.TB, a *app, port int) agent.Config {
	cfg := podNetwork(a.config(t), port)
	cfg.WaitingInterval = waitingInterval
	return cfg
}

// waitState waits until the Service's ui-state is state and its ui-reason contains reason.
func (a *app) waitState(t testing.TB, state, reason string) *corev1.Service {
	t.Helper()
	var svc *corev1.Service
	testcluster.WaitFor(t, 20*time.Second, fmt.Sprintf("ui-state %s, ui-reason containing %q", state, reason), func() (bool, string) {
		svc = a.service_(t)
		ann := svc.Annotations
		return ann[names.AnnotationUIState] == state && strings.Contains(ann[names.AnnotationUIReason], reason), fmt.Sprint(ann)
	})
	return svc
}

// TestWaitingState: a UI behind a filter without a credential is never bound, and the
// Service says so (waiting, the probe's reason, this Pod, since the runtime started) in one
// PATCH, not before the interval; the same reason again costs nothing; a new reason one more
// PATCH; the bind that follows is still one PATCH; and once this Pod bound, a new reason
// after its withdrawal writes nothing.
func TestWaitingState(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready, Filter: fakespark.JWS, Token: "jws"})
	port := ui.Port
	t0 := time.Now()
	start(t, a, waitingConfig(t, a, port))

	svc := a.waitState(t, names.UIStateWaiting, fmt.Sprintf("port %d: the UI refuses the runtime's probes", port))
	if took := time.Since(t0); took < waitingInterval {
		t.Errorf("the waiting state was written %s after the start, before the interval (%s)", took, waitingInterval)
	}
	checkStatus(t, svc, names.UIStateWaiting, a.pod.Name, 0)
	if len(svc.Spec.Selector) != 0 {
		t.Errorf("selector %v while waiting, want none", svc.Spec.Selector)
	}
	since := svc.Annotations[names.AnnotationUISince]
	if s, _ := time.Parse(time.RFC3339, since); s.Before(t0.Truncate(time.Second)) || s.After(t0.Add(time.Second)) {
		t.Errorf("ui-since %s, want the runtime's start %s", since, t0.UTC().Format(time.RFC3339))
	}
	a.waitAudit(t, map[string]int{"patch": 1, "patch 200": 1, "get": 0})

	// The same reason, probe after probe, for several intervals: no request.
	time.Sleep(3 * waitingInterval)
	a.waitAudit(t, map[string]int{"patch": 1, "get": 0})

	// Another filter on the same port: a new reason, one more PATCH; the state's since stays.
	ui.Close()
	ui = startUI(t, fakespark.Options{Addr: addr(port), AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready,
		Filter: fakespark.SPNEGO, Header: [2]string{"Authorization", "Negotiate abc"}})
	svc = a.waitState(t, names.UIStateWaiting, "401")
	if got := svc.Annotations[names.AnnotationUISince]; got != since {
		t.Errorf("ui-since moved from %s to %s with the reason", since, got)
	}
	a.waitAudit(t, map[string]int{"patch": 2, "patch 200": 2, "get": 0})
	t.Logf("waiting: %s", svc.Annotations[names.AnnotationUIReason])

	// The UI without a filter: bound in one PATCH, the reason gone.
	ui.Close()
	ui = startUI(t, fakespark.Options{Addr: addr(port), AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	a.waitState(t, names.UIStateBound, "")
	a.checkBound(t, port)
	a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 3, "get": 0})

	// Withdrawn (UI lost), then a filtered UI again: a reason, but this Pod bound, so the
	// Service keeps the withdrawal's state.
	ui.Close()
	a.waitState(t, names.UIStateWithdrawn, "UI lost")
	startUI(t, fakespark.Options{Addr: addr(port), AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready, Filter: fakespark.JWS, Token: "jws"})
	time.Sleep(3 * waitingInterval)
	a.waitAudit(t, map[string]int{"patch": 4, "patch 200": 4, "get": 0})
	a.checkWithdrawn(t)
}

// TestWaitingLeavesRoutedServices: a Service bound or handed off by another Pod of the
// application is never changed by a waiting runtime (its two guarded forms refused once, then
// nothing while the reason holds); one withdrawn by an earlier Pod says waiting after a refused
// first form.
func TestWaitingLeavesRoutedServices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		selector func(a *app) map[string]string
		state    string
		written  bool
	}{
		{"bound by another Pod", func(a *app) map[string]string {
			return map[string]string{names.LabelAppSelector: a.appID, names.LabelSparkRole: names.RoleDriver}
		}, names.UIStateBound, false},
		{"handed off by another Pod", func(*app) map[string]string { return names.RedirectorSelector() }, names.UIStateHandedOff, false},
		{"withdrawn by an earlier Pod", func(*app) map[string]string {
			return map[string]string{names.WithdrawnSelectorKey: "0b7d5c9e-earlier-pod"}
		}, names.UIStateWithdrawn, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newApp(t, shared(t), appOpts{})
			ctx := testcluster.Context(t, 30*time.Second)
			svc := a.service_(t)
			svc.Spec.Selector = tc.selector(a)
			svc.Annotations[names.AnnotationUIState] = tc.state
			svc.Annotations[names.AnnotationUIPod] = "other-driver"
			svc, err := a.c.Client.CoreV1().Services(a.ns).Update(ctx, svc, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready, Filter: fakespark.JWS, Token: "jws"})
			start(t, a, waitingConfig(t, a, ui.Port))
			if tc.written {
				got := a.waitState(t, names.UIStateWaiting, "the UI refuses the runtime's probes")
				checkStatus(t, got, names.UIStateWaiting, a.pod.Name, 0)
				if fmt.Sprint(got.Spec.Selector) != fmt.Sprint(svc.Spec.Selector) {
					t.Errorf("selector %v, want the earlier Pod's withdrawal kept: %v", got.Spec.Selector, svc.Spec.Selector)
				}
				a.waitAudit(t, map[string]int{"patch": 2, "patch 422": 1, "patch 200": 1, "get": 0})
				return
			}
			a.waitAudit(t, map[string]int{"patch": 2, "patch 422": 2, "get": 0})
			time.Sleep(3 * waitingInterval)
			a.waitAudit(t, map[string]int{"patch": 2, "patch 422": 2, "get": 0})
			if got := a.service_(t); got.ResourceVersion != svc.ResourceVersion {
				t.Errorf("the Service changed: resourceVersion %s → %s, annotations %v, selector %v",
					svc.ResourceVersion, got.ResourceVersion, got.Annotations, got.Spec.Selector)
			}
		})
	}
}
