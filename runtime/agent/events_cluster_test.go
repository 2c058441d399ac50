package agent_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/events"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// grantEvents adds to the app's Role the events rule sparkui-fn writes (transform/rbac.go),
// and waits until the authorizer allows the create.
func (a *app) grantEvents(t testing.TB) {
	t.Helper()
	a.c.AddRoleRule(t, a.ns, sidecar.DefaultRole(a.service), sa, rbacv1.PolicyRule{APIGroups: []string{sidecar.EventsAPIGroup},
		Resources: []string{sidecar.EventsResource}, Verbs: sidecar.EventsVerbs})
}

// runtimeEvents lists the namespace's events.k8s.io/v1 Events about the driver Pod or by
// sparkui-runtime, oldest first; the controller-manager's Events about other objects (the
// EndpointSlice controller's, ...) are only logged.
func (a *app) runtimeEvents(t testing.TB) []eventsv1.Event {
	t.Helper()
	list, err := a.c.Client.EventsV1().Events(a.ns).List(testcluster.Context(t, 10*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var evs []eventsv1.Event
	for _, e := range list.Items {
		if e.ReportingController == events.ReportingController || (e.Regarding.Kind == "Pod" && e.Regarding.Name == a.pod.Name) {
			evs = append(evs, e)
		} else {
			t.Logf("not the runtime's: %s", eventLine(e))
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].EventTime.Before(&evs[j].EventTime) })
	return evs
}

func eventLine(e eventsv1.Event) string {
	rel := "-"
	if e.Related != nil {
		rel = e.Related.Kind + "/" + e.Related.Name
	}
	return fmt.Sprintf("%-7s %-9s %-8s by %s/%s regarding %s/%s (uid %s) related %s: %s",
		e.Type, e.Reason, e.Action, e.ReportingController, e.ReportingInstance,
		e.Regarding.Kind, e.Regarding.Name, e.Regarding.UID, rel, e.Note)
}

// TestEvents: with the Role sparkui-fn writes (events rule included), a bind and a withdrawal
// at SIGTERM are two Normal Events about the driver Pod, reported by sparkui-runtime, related
// to the UI Service, as the API server stores them; the bind and withdrawal cost the same
// Service requests as without Events.
func TestEvents(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	a.grantEvents(t)
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	a.checkWithdrawn(t)
	a.waitAudit(t, map[string]int{"patch": 2, "get": 0})

	evs := a.runtimeEvents(t)
	var lines, reasons []string
	for _, e := range evs {
		lines = append(lines, eventLine(e))
		reasons = append(reasons, e.Reason)
	}
	t.Logf("Events in %s:\n%s", a.ns, strings.Join(lines, "\n"))
	if !slices.Equal(reasons, []string{events.ReasonBound, events.ReasonWithdrawn}) {
		t.Fatalf("Events %q, want exactly Bound then Withdrawn", reasons)
	}
	notes := []string{
		fmt.Sprintf("UI Service %s bound to port %d, ", a.service, ui.Port),
		fmt.Sprintf("UI Service %s withdrawn (SIGTERM)", a.service),
	}
	for i, e := range evs {
		if e.Type != "Normal" || e.ReportingController != events.ReportingController || e.ReportingInstance != a.pod.Name {
			t.Errorf("%s: type %q reported by %q/%q, want Normal by %s/%s", e.Reason, e.Type, e.ReportingController, e.ReportingInstance, events.ReportingController, a.pod.Name)
		}
		if g := e.Regarding; g.Kind != "Pod" || g.APIVersion != "v1" || g.Namespace != a.ns || g.Name != a.pod.Name || g.UID != a.pod.UID {
			t.Errorf("%s regarding %+v, want the driver Pod %s/%s uid %s", e.Reason, g, a.ns, a.pod.Name, a.pod.UID)
		}
		if rel := e.Related; rel == nil || rel.Kind != "Service" || rel.Namespace != a.ns || rel.Name != a.service {
			t.Errorf("%s related %+v, want the UI Service %s/%s", e.Reason, rel, a.ns, a.service)
		}
		if !strings.HasPrefix(e.Note, notes[i]) {
			t.Errorf("%s note %q, want it to start with %q", e.Reason, e.Note, notes[i])
		}
	}
	if !strings.Contains(evs[0].Note, "s after the runtime started") {
		t.Errorf("Bound note %q does not say the seconds since the runtime started", evs[0].Note)
	}
	// Only POSTs: no repeat, so no series PATCH; never a GET, LIST or WATCH.
	if got := a.auditResource(t, sidecar.EventsResource); got["create 201"] != 2 || len(got) != 2 {
		t.Errorf("requests on events %v, want two creates answered 201 and nothing else", got)
	}
}

// TestEventsForbidden: without the events rule (a Role of an older sparkui-fn) the runtime
// binds and withdraws with the same Service requests; each of its two Events is refused once
// (403) and never retried, and the runtime says so once in its log.
func TestEventsForbidden(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	a.checkWithdrawn(t)
	a.waitAudit(t, map[string]int{"patch": 2, "patch 200": 2, "get": 0})
	testcluster.WaitFor(t, 10*time.Second, "two refused creates of Events", func() (bool, string) {
		got := a.auditResource(t, sidecar.EventsResource)
		return got["create 403"] == 2, fmt.Sprint(got)
	})
	time.Sleep(500 * time.Millisecond)
	if got := a.auditResource(t, sidecar.EventsResource); got["create 403"] != 2 || len(got) != 2 {
		t.Errorf("requests on events %v, want two creates refused 403 and nothing else (no retry)", got)
	}
	if evs := a.runtimeEvents(t); len(evs) != 0 {
		t.Errorf("%d Events stored without the permission", len(evs))
	}
	if n := strings.Count(r.logs.String(), "Events not recorded: the API server refuses them (403)"); n != 1 {
		t.Errorf("the 403 logged %d times, want once:\n%s", n, r.logs.String())
	}
}

// TestEventsOff: with --events=false (runtime.events: false) the runtime sends no request on
// Events at all, even where the Role would allow them, and binds and withdraws as before.
func TestEventsOff(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	a.grantEvents(t)
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t)
	cfg.NoEvents = true
	r := start(t, a, cfg)
	r.waitBound(t, ui.Port)
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	a.checkWithdrawn(t)
	a.waitAudit(t, map[string]int{"patch": 2, "patch 200": 2, "get": 0})
	if got := a.auditResource(t, sidecar.EventsResource); len(got) != 0 {
		t.Errorf("requests on events %v with --events=false, want none", got)
	}
	if evs := a.runtimeEvents(t); len(evs) != 0 {
		t.Errorf("%d Events stored with --events=false", len(evs))
	}
}

// TestEventsUIWarning: a UI behind Spark's JWS filter that the runtime has no credential for is
// never bound, and each "still waiting" period says why in a Warning Event about the driver
// Pod (UIAuthRequired, the probe's reason in the note), repeats folded into one Event's series
// by client-go: where `kubectl describe pod` shows it (issue 32, issue 31 item 4).
func TestEventsUIWarning(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	a.grantEvents(t)
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready, Filter: fakespark.JWS, Token: "jws"})
	// The one candidate is this test's UI: on the host network the runtime would also see
	// the denied UIs of tests running in parallel and name whichever it met first.
	cfg := podNetwork(a.config(t), ui.Port)
	cfg.WaitLog = 300 * time.Millisecond
	r := start(t, a, cfg)
	var warn eventsv1.Event
	testcluster.WaitFor(t, 20*time.Second, "a Warning UIAuthRequired Event", func() (bool, string) {
		var seen []string
		for _, e := range a.runtimeEvents(t) {
			seen = append(seen, eventLine(e))
			if e.Type == "Warning" && e.Reason == events.ReasonUIAuthRequired {
				warn = e
				return true, ""
			}
		}
		return false, strings.Join(seen, "\n")
	})
	t.Logf("Events in %s:\n%s", a.ns, eventLine(warn))
	if want := fmt.Sprintf("port %d: the UI refuses the runtime's probes", ui.Port); !strings.Contains(warn.Note, want) {
		t.Errorf("note %q, want it to contain %q", warn.Note, want)
	}
	if g := warn.Regarding; g.Kind != "Pod" || g.Name != a.pod.Name || g.UID != a.pod.UID || warn.ReportingController != events.ReportingController {
		t.Errorf("regarding %+v reported by %q, want the driver Pod by %s", g, warn.ReportingController, events.ReportingController)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	for _, e := range a.runtimeEvents(t) {
		if e.Reason == events.ReasonBound {
			t.Errorf("a Bound Event for a UI the runtime could not prove: %s", eventLine(e))
		}
	}
}
