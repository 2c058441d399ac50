package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestClientModePodNetwork: a notebook driver in client mode on the Pod network: Spark's id is
// spark-application-<millis> (spark.app.id unset) and spark.kubernetes.driver.pod.name is not
// set. Every socket of the Pod network is this Pod's: the live UI is bound, with one PATCH.
func TestClientModePodNetwork(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: "spark-application-1767225600000", State: fakespark.Ready})
	r := start(t, a, podNetwork(a.config(t), ui.Port))
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	a.waitSlice(t, ui.Port)
	a.waitAudit(t, map[string]int{"patch": 1, "patch 200": 1, "get": 0})
}

// TestRedactedPodNamePodNetwork: a driver Pod whose name spark.redaction.regex hides
// ("token-…" reads *********(redacted) in /environment): on the Pod network that does not block
// the bind (a redacted value means "cannot tell", never "another application").
func TestRedactedPodNamePodNetwork(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{podName: "token-sync-driver"})
	ui := startUI(t, fakespark.Options{AppID: "spark-application-1767225600001", PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, podNetwork(a.config(t), ui.Port))
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	a.waitAudit(t, map[string]int{"patch": 1, "patch 200": 1, "get": 0})
}

// TestHostNetworkHistoryServer: under hostNetwork a Spark History Server on a lower port lists
// this application (in progress, from its event log) among others: it is never bound; the
// driver's own UI is, with a single PATCH (nothing bound first and moved after).
func TestHostNetworkHistoryServer(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	l, port := freePortPair(t)
	_ = l.Close()
	// This application listed first, in progress, with this Pod's name in its environment:
	// only "several applications listed" tells the History Server from the live UI.
	hs := startUI(t, fakespark.Options{Addr: addr(port), State: fakespark.Ready, History: []fakespark.App{
		{ID: a.appID, PodName: a.pod.Name, Namespace: a.ns},
		{ID: "spark-finished", Completed: true, PodName: "old-driver", Namespace: a.ns},
		{ID: "spark-other", PodName: "other-driver", Namespace: a.ns},
	}})
	ui := startUI(t, fakespark.Options{Addr: addr(port + 1), AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t) // hostNetwork, random port: every listening socket is a candidate
	r := start(t, a, cfg)
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	a.waitSlice(t, ui.Port)
	// Sockets are asked lowest port first: the History Server is asked in the same pass as
	// the driver's UI or before (its answer may land just after the bind).
	testcluster.WaitFor(t, 5*time.Second, "the History Server to have been asked (else the test proves nothing)", func() (bool, string) {
		n := hs.RequestsFrom(a.me())
		return n > 0, itoa(int(n))
	})
	// Asked once: a History Server's socket stays one for its whole life.
	n := hs.RequestsFrom(a.me())
	ui.Close()
	r.waitWithdrawn(t)
	time.Sleep(500 * time.Millisecond)
	if st := r.Status(); st.Bound {
		t.Fatalf("bound to port %d after the driver's UI went away (History Server on %d)", st.Port, hs.Port)
	}
	if m := hs.RequestsFrom(a.me()); m != n {
		t.Errorf("the History Server was asked %d more times", m-n)
	}
	a.waitAudit(t, map[string]int{"patch": 2, "patch 200": 2, "get": 0})
}

// TestSecondPodSurvivesFirstWithdrawal: two driver Pods of one application (a replacement Pod,
// the next run of a schedule) and one UI Service. The second binds after the first; the
// first's withdrawal is refused by its guard (the Service's owner is no longer the first Pod),
// counts as done, and the Service stays routed to the second Pod's UI.
func TestSecondPodSurvivesFirstWithdrawal(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui1 := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r1 := start(t, a, podNetwork(a.config(t), ui1.Port))
	r1.waitBound(t, ui1.Port)
	a.checkBound(t, ui1.Port)

	ip2 := nextIP()
	pod2 := a.addPod(t, "wordcount-driver-2", ip2)
	ui2 := startUI(t, fakespark.Options{AppID: a.appID, PodName: pod2.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg2 := podNetwork(a.config(t), ui2.Port)
	cfg2.PodName, cfg2.PodUID = pod2.Name, string(pod2.UID)
	r2 := start(t, a, cfg2)
	r2.waitBound(t, ui2.Port)

	// The first Pod terminates: SIGTERM withdraws for good.
	if err := r1.stop(t); err != nil {
		t.Fatalf("the first runtime's withdrawal: %v", err)
	}
	if !strings.Contains(r1.logs.String(), "this Pod does not hold the binding") {
		t.Errorf("the first runtime did not say the binding was not its own:\n%s", r1.logs.String())
	}
	svc := a.service_(t)
	if got := svc.Spec.Ports[0].TargetPort.IntValue(); got != ui2.Port {
		t.Errorf("targetPort %d, want the second Pod's %d", got, ui2.Port)
	}
	if len(svc.Spec.Selector) != 2 || svc.Spec.Selector["spark-app-selector"] != a.appID {
		t.Errorf("selector %v: the first Pod's withdrawal undid the second's bind", svc.Spec.Selector)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != pod2.UID {
		t.Errorf("ownerReferences %+v, want the second Pod", svc.OwnerReferences)
	}
	// The first Pod goes away; its Service is not collected (owned by the second) and routes
	// to the second Pod's UI.
	ctx := testcluster.Context(t, 30*time.Second)
	if err := a.c.Client.CoreV1().Pods(a.ns).Delete(ctx, a.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	a.waitSliceIP(t, ip2, ui2.Port)
	// Bind, bind, and the first's withdrawal refused (422, one PATCH, no read).
	a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 2, "patch 422": 1, "get": 0})
	if st := r2.Status(); !st.Bound || st.Port != ui2.Port {
		t.Errorf("second runtime %+v", st)
	}
}

// TestFilteredUI: a UI behind Spark's JWSFilter (spark.ui.filters) answers 403 to anonymous
// requests. Without a credential the runtime never binds it, says so once (naming the filter),
// and writes it to the termination log; with the token mounted as a file it binds.
func TestFilteredUI(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready,
		Filter: fakespark.JWS, Token: "eyJhbGciOiJIUzI1NiJ9.e30.c2ln"})
	const filter = "org.apache.spark.ui.JWSFilter"
	cfg := podNetwork(a.config(t), ui.Port)
	cfg.UIFilters = filter
	r := start(t, a, cfg)
	// Probes back off from 1 s when refused: in 3.5 s the UI is asked at least twice.
	time.Sleep(3500 * time.Millisecond)
	if n := ui.RequestsFrom(a.me()); n < 2 {
		t.Fatalf("the filtered UI was asked %d times", n)
	}
	if st := r.Status(); st.Bound {
		t.Fatalf("bound a UI it could not verify: %+v", st)
	}
	logs := r.logs.String()
	if n := strings.Count(logs, "the UI refuses the runtime's probes"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, logs)
	}
	term, _ := os.ReadFile(cfg.TerminationLog)
	for _, want := range []string{"403", filter, "--auth-bearer-file"} {
		if !strings.Contains(string(term), want) {
			t.Errorf("termination log %q lacks %q", term, want)
		}
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	// The token from a Secret, mounted as a file.
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("eyJhbGciOiJIUzI1NiJ9.e30.c2ln\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg2 := podNetwork(a.config(t), ui.Port)
	cfg2.UIFilters, cfg2.AuthBearerFile = filter, tokenFile
	r2 := start(t, a, cfg2)
	r2.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	// Only the bind was written: the first runtime never wrote anything.
	a.waitAudit(t, map[string]int{"patch": 1, "patch 200": 1, "get": 0})
}
