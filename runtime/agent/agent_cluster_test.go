package agent_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/control"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

func shared(t testing.TB) *testcluster.Cluster {
	t.Helper()
	return testcluster.Shared(t, clusterOpts)
}

// checkBound checks the Service as the API server has it: targetPort, the driver selector,
// the Pod as owner without blockOwnerDeletion.
func (a *app) checkBound(t testing.TB, port int) {
	t.Helper()
	svc := a.service_(t)
	if got := svc.Spec.Ports[0].TargetPort.IntValue(); got != port {
		t.Errorf("targetPort %d, want %d", got, port)
	}
	if svc.Spec.Selector[names.LabelAppSelector] != a.appID || svc.Spec.Selector[names.LabelSparkRole] != names.RoleDriver || len(svc.Spec.Selector) != 2 {
		t.Errorf("selector %v", svc.Spec.Selector)
	}
	if len(svc.OwnerReferences) != 1 {
		t.Fatalf("ownerReferences %v", svc.OwnerReferences)
	}
	checkStatus(t, svc, names.UIStateBound, a.pod.Name, port)
	o := svc.OwnerReferences[0]
	if o.Kind != "Pod" || o.APIVersion != "v1" || o.Name != a.pod.Name || o.UID != a.pod.UID || o.BlockOwnerDeletion != nil || o.Controller != nil {
		t.Errorf("ownerReference %+v", o)
	}
}

// checkStatus checks the status annotations (docs/service-status.md): state, Pod, port
// (bound only), a reason only when not bound, since an RFC 3339 UTC time of the last minute.
func checkStatus(t testing.TB, svc *corev1.Service, state, pod string, port int) {
	t.Helper()
	ann := svc.Annotations
	if ann[names.AnnotationUIState] != state || ann[names.AnnotationUIPod] != pod {
		t.Errorf("state %q pod %q, want %q %q (annotations %v)", ann[names.AnnotationUIState], ann[names.AnnotationUIPod], state, pod, ann)
	}
	p, hasPort := ann[names.AnnotationUIPort]
	if (port > 0) != hasPort || (port > 0 && p != strconv.Itoa(port)) {
		t.Errorf("ui-port %q (present %v), want %d", p, hasPort, port)
	}
	if _, ok := ann[names.AnnotationUIReason]; ok && state == names.UIStateBound {
		t.Errorf("ui-reason %q on a bound Service", ann[names.AnnotationUIReason])
	}
	since, err := time.Parse(time.RFC3339, ann[names.AnnotationUISince])
	if err != nil || !strings.HasSuffix(ann[names.AnnotationUISince], "Z") || time.Since(since) > time.Minute || time.Until(since) > time.Second {
		t.Errorf("ui-since %q: not a recent RFC 3339 UTC time (%v)", ann[names.AnnotationUISince], err)
	}
}

func (a *app) checkWithdrawn(t testing.TB) {
	t.Helper()
	svc := a.service_(t)
	if len(svc.Spec.Selector) != 1 || svc.Spec.Selector[names.WithdrawnSelectorKey] != string(a.pod.UID) {
		t.Errorf("selector after withdrawal %v, want {%s: %s}", svc.Spec.Selector, names.WithdrawnSelectorKey, a.pod.UID)
	}
	checkStatus(t, svc, names.UIStateWithdrawn, a.pod.Name, 0)
}

// TestRandomPort: UI on a random port, "starting up" first; bind, cheap watch, UI lost →
// withdraw, UI back on another port → rebind; EndpointSlices follow; the audit log shows one
// PATCH per change and no GET.
func TestRandomPort(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.StartingUp})
	cfg := a.config(t)
	cfg.WaitLog = 200 * time.Millisecond
	r := start(t, a, cfg)

	// Starting up is not a match: nothing is written, and the runtime says what it waits for.
	time.Sleep(600 * time.Millisecond)
	if logs := r.logs.String(); !strings.Contains(logs, "still waiting for the UI") || !strings.Contains(logs, fmt.Sprintf("port %d: starting-up", ui.Port)) {
		t.Errorf("no periodic \"still waiting\" line naming the starting-up UI:\n%s", logs)
	}
	if st := r.Status(); st.Bound {
		t.Fatalf("bound while the UI was starting up: %+v", st)
	}
	if n := ui.RequestsFrom(a.me()); n < 2 {
		t.Fatalf("the starting-up UI was asked %d times, want it asked at every poll", n)
	}
	ui.Set(fakespark.Ready)
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	a.waitSlice(t, ui.Port)

	// The watch costs the UI nothing while its socket keeps listening.
	n := ui.RequestsFrom(a.me())
	time.Sleep(time.Second)
	if m := ui.RequestsFrom(a.me()); m != n {
		t.Errorf("the UI got %d requests while bound, want none", m-n)
	}

	ui.Close()
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
	a.waitSliceEmpty(t)

	ui2 := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r.waitBound(t, ui2.Port)
	a.checkBound(t, ui2.Port)
	a.waitSlice(t, ui2.Port)

	a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 3, "get": 0})
}

// TestFixedPortTakenByAnotherApp: spark.ui.port is taken by another application's UI (same
// network namespace, as under hostNetwork): the runtime must skip it and bind port+1.
func TestFixedPortTakenByAnotherApp(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	l, port := freePortPair(t)
	_ = l.Close()
	other := startUI(t, fakespark.Options{Addr: addr(port), AppID: "spark-someone-else", PodName: "someone-else-driver", State: fakespark.Ready})
	ours := startUI(t, fakespark.Options{Addr: addr(port + 1), AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t)
	cfg.UIPort, cfg.MaxRetries, cfg.HostNetwork = port, 3, true
	cfg.Sockets = "proc" // the procfs source, end to end (the others use sock_diag)
	r := start(t, a, cfg)
	r.waitBound(t, ours.Port)
	a.checkBound(t, port+1)
	a.waitSlice(t, port+1)
	if other.RequestsFrom(a.me()) == 0 {
		t.Error("the other application's UI was never asked")
	}
	// The other UI is never asked again: its socket serves the other application for life.
	n := other.RequestsFrom(a.me())
	ours.Close()
	r.waitWithdrawn(t)
	time.Sleep(500 * time.Millisecond)
	if m := other.RequestsFrom(a.me()); m != n {
		t.Errorf("the other application's UI was asked %d more times", m-n)
	}
	if st := r.Status(); st.Bound {
		t.Errorf("bound to %d after our UI went away", st.Port)
	}
}

func addr(port int) string { return "127.0.0.1:" + itoa(port) }

// TestTLS: the HTTPS connector is the target; the plain port only redirects.
func TestTLS(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{tls: true})
	ui := startUI(t, fakespark.Options{TLS: true, AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	red, err := fakespark.StartRedirector("", ui.Port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(red.Close)
	cfg := a.config(t)
	cfg.UIPort, cfg.SSLPort = red.Port, 0 // random secure port
	r := start(t, a, cfg)
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	if svc := a.service_(t); svc.Spec.Ports[0].Name != names.UIPortNameTLS {
		t.Errorf("port name %q", svc.Spec.Ports[0].Name)
	}
}

// TestDriverOnly: Spark's id is local-<millis>; the environment's driver Pod name proves
// identity.
func TestDriverOnly(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	// Same Pod name in another namespace (hostNetwork: the node's sockets are shared), and
	// another Pod in this namespace.
	otherNS := startUI(t, fakespark.Options{AppID: "local-1767225600001", PodName: a.pod.Name, Namespace: "elsewhere", State: fakespark.Ready})
	otherPod := startUI(t, fakespark.Options{AppID: "local-1767225600002", PodName: "another-driver", Namespace: a.ns, State: fakespark.Ready})
	ui := startUI(t, fakespark.Options{AppID: "local-1767225600000", PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t)
	cfg.HostNetwork = true
	r := start(t, a, cfg)
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	if otherNS.RequestsFrom(a.me()) == 0 || otherPod.RequestsFrom(a.me()) == 0 {
		t.Errorf("the other UIs were not asked (%d, %d requests)", otherNS.RequestsFrom(a.me()), otherPod.RequestsFrom(a.me()))
	}
}

// TestPreStopWithdraw: the hook's request returns only once the API server acknowledged the
// withdrawal, and the runtime does not bind again while the JVM finishes.
func TestPreStopWithdraw(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t)
	r := start(t, a, cfg)
	r.waitBound(t, ui.Port)
	st, err := os.Stat(cfg.Socket)
	if err != nil || st.Mode().Perm() != 0o666 || st.Mode().Type() != os.ModeSocket {
		t.Fatalf("control socket %v %v, want a socket with mode 0666", st.Mode(), err)
	}

	start := time.Now()
	if err := control.Withdraw(cfg.Socket, 10*time.Second); err != nil {
		t.Fatalf("withdraw: %v\n%s", err, r.logs.String())
	}
	t.Logf("preStop withdrawal acknowledged in %s", time.Since(start).Round(time.Millisecond))
	a.checkWithdrawn(t) // already, not eventually
	a.waitSliceEmpty(t)

	time.Sleep(500 * time.Millisecond) // the UI is still up: no rebind
	if st := r.Status(); st.Bound || !st.Final {
		t.Fatalf("after preStop: %+v", st)
	}
	// A second request (the hook retried) and SIGTERM write nothing more.
	if err := control.Withdraw(cfg.Socket, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	a.waitAudit(t, map[string]int{"patch": 2, "get": 0})
}

// TestSIGTERM: without preStop (Pod deleted while the hook could not run), SIGTERM withdraws.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	a.checkWithdrawn(t)
	a.waitAudit(t, map[string]int{"patch": 2, "get": 0})
}

// TestRoleMissing: 403 names the verb, resource, namespace, ServiceAccount and Role; the
// termination log has it; once the Role exists the runtime binds.
func TestRoleMissing(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{noRBAC: true})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t)
	r := start(t, a, cfg)
	msg := r.waitErr(t, "403")
	for _, want := range []string{"patch", "services", `"` + a.service + `"`, "namespace " + a.ns,
		"ServiceAccount " + a.ns + "/" + sa, "Role " + a.ns + "/" + sidecar.DefaultRole(a.service), "[get patch]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("403 message does not name %q: %s", want, msg)
		}
	}
	if b, _ := os.ReadFile(cfg.TerminationLog); !strings.Contains(string(b), "403 Forbidden") {
		t.Errorf("termination log %q", b)
	}
	a.createRBAC(t)
	r.waitBound(t, ui.Port)
	if b, _ := os.ReadFile(cfg.TerminationLog); len(b) != 0 {
		t.Errorf("termination log not cleared after recovery: %q", b)
	}
}

// TestServiceCreatedLate: 404 at start is retried until the Service exists.
func TestServiceCreatedLate(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{noService: true})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitErr(t, "404 Not Found", "retrying")
	a.createService(t, "")
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
}

// TestServiceOfAnotherApp: the guard refuses; the runtime says whose the Service is and does
// not touch it; withdrawing it counts as done.
func TestServiceOfAnotherApp(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcAppID: "spark-not-this-one"})
	startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := a.config(t)
	r := start(t, a, cfg)
	msg := r.waitErr(t, "refused")
	if !strings.Contains(msg, `application "spark-not-this-one"`) {
		t.Errorf("refusal does not name the owner: %s", msg)
	}
	if b, _ := os.ReadFile(cfg.TerminationLog); !strings.Contains(string(b), "spark-not-this-one") {
		t.Errorf("termination log %q", b)
	}
	svc := a.service_(t)
	if len(svc.Spec.Selector) != 0 || len(svc.OwnerReferences) != 0 || svc.Spec.Ports[0].TargetPort.IntValue() != 4040 {
		t.Errorf("the other application's Service was changed: %+v", svc.Spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Withdraw(ctx, "test"); err != nil {
		t.Errorf("withdrawing a Service that is not ours: %v", err)
	}
}

// TestRestartWithdrawsStaleBinding: the container restarted while bound and the UI went away
// meanwhile: the first pass withdraws.
func TestRestartWithdrawsStaleBinding(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	// As the previous run's bind left it: selector, targetPort, and this Pod as owner.
	patch := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"` + a.pod.Name + `","uid":"` + string(a.pod.UID) + `"}]},` +
		`"spec":{"selector":{"spark-app-selector":"` + a.appID + `","spark-role":"driver"},"ports":[{"name":"spark-ui","port":4040,"targetPort":41234}]}}`
	if _, err := a.c.Client.CoreV1().Services(a.ns).Patch(testcluster.Context(t, 10*time.Second), a.service, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := a.config(t)
	if err := os.WriteFile(cfg.StateFile, []byte("41234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, a, cfg)
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
	if _, err := os.Stat(cfg.StateFile); !os.IsNotExist(err) {
		t.Errorf("state file left after withdrawal: %v", err)
	}
	// The Service's state is unknown after a restart: the withdrawal also clears the resolved
	// external URI (add + remove) and writes the status annotations into the map sparkui-fn's
	// Service has (Flux's ssa annotation). One PATCH, no GET.
	a.waitAudit(t, map[string]int{"patch": 1, "patch 200": 1, "get": 0})
}

// TestAPIServerRestart: the API server goes away while the UI does; the withdrawal is retried
// with backoff and lands once the API server is back.
func TestAPIServerRestart(t *testing.T) {
	t.Parallel()
	c := testcluster.Start(t, testcluster.Options{})
	a := newApp(t, c, appOpts{})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)

	apiserver := c.Env.ControlPlane.APIServer
	if err := apiserver.Stop(); err != nil {
		t.Fatalf("stopping kube-apiserver: %v", err)
	}
	ui.Close()
	r.waitErr(t, "unreachable")
	time.Sleep(2 * time.Second) // a few backoff steps
	if st := r.Status(); st.Bound == false {
		t.Fatalf("withdrawn while the API server was down? %+v", st)
	}
	if err := apiserver.Start(); err != nil {
		t.Fatalf("restarting kube-apiserver: %v", err)
	}
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
}
