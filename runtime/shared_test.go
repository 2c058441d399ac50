package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// sharedSetup creates a Service shared by the runs of "nightly" as sparkui-fn emits it for a
// carrier other than a spark-submit Pod (label sparkui.dev/application, no spark-app-selector),
// the function's Role and RoleBinding, and one run's driver Pod labelled with appID.
func sharedSetup(t *testing.T, c *testcluster.Cluster, ns, appID string) (*corev1.Pod, string) {
	const svc = "nightly-sparkui-ui-svc"
	return createEmitted(t, c, ns, "nightly-1-driver", svc, appID,
		map[string]string{names.LabelManagedBy: names.ManagedByValue, "sparkui.dev/application": "nightly"}), svc
}

// sharedRunArgs are the container args sparkui-fn emits for such a carrier, $(SPARKUI_APP_ID)
// unexpanded, followed by the test's paths.
func sharedRunArgs(dir string) []string {
	args := sidecar.Config{Service: "nightly-sparkui-ui-svc", UIPort: 0, MaxRetries: 16, HostNetwork: true,
		GuardLabel:       "sparkui.dev/application=nightly",
		PodSelector:      names.LabelAppSelector + "=$(" + sidecar.EnvAppID + ")," + names.LabelSparkRole + "=" + names.RoleDriver,
		NoOwnerReference: true,
	}.Args()
	return append(args, "--socket="+filepath.Join(dir, "runtime.sock"), "--install=", "--state-file="+filepath.Join(dir, "bound-port"),
		"--termination-log="+filepath.Join(dir, "termination-log"))
}

// expand replaces $(name) in args with value, as the kubelet does for a variable defined in
// the container's env.
func expand(args []string, name, value string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "$("+name+")", value)
	}
	return out
}

// auditCounts counts the requests ServiceAccount spark of ns made on Services, by verb and by
// "verb code", from the API server's audit log.
func auditCounts(t *testing.T, ns string) map[string]int {
	t.Helper()
	return auditCountsFor(t, ns, "spark")
}

// auditCountsFor is auditCounts for ServiceAccount sa of ns.
func auditCountsFor(t *testing.T, ns, sa string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	err := testcluster.ReadAudit(auditLog, func(ev testcluster.AuditEvent) {
		if ev.Username == "system:serviceaccount:"+ns+":"+sa && ev.Namespace == ns && ev.Resource == "services" {
			counts[ev.Verb]++
			counts[fmt.Sprintf("%s %d", ev.Verb, ev.Code)]++
		}
	})
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return counts
}

// TestSharedServiceBinary: the binary with the args sparkui-fn emits for a shared Service.
// $SPARKUI_APP_ID from the downward API and the selector expanded by the kubelet: it binds
// this run's Pod without becoming the Service's owner, withdraws on SIGTERM, exits 0. The
// variable undefined (the reference left as is) or empty (the Pod lacks the label): it
// refuses the selector before any request, says why in the termination log, keeps running
// until SIGTERM and exits 0.
func TestSharedServiceBinary(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	pod, svc := sharedSetup(t, c, ns, appID)
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	env := []string{"KUBECONFIG=" + kubeconfig, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}
	termLogOf := func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, "termination-log"))
		return string(b)
	}

	for _, tc := range []struct {
		name string
		env  []string // SPARKUI_APP_ID as the container's env has it
		args func([]string) []string
		want string
	}{
		{"undefined", nil, func(a []string) []string { return a }, "holds the unexpanded reference $(SPARKUI_APP_ID)"},
		{"empty", []string{sidecar.EnvAppID + "="}, func(a []string) []string { return expand(a, sidecar.EnvAppID, "") },
			"spark-app-selector= has an empty key or value"},
	} {
		dir := t.TempDir()
		p := startProc(t, append(append([]string{}, env...), tc.env...), tc.args(sharedRunArgs(dir))...)
		testcluster.WaitFor(t, 10*time.Second, tc.name+": the termination log to say "+tc.want, func() (bool, string) {
			l := termLogOf(dir)
			return strings.Contains(l, tc.want) && strings.Contains(l, "not binding a selector"), l
		})
		time.Sleep(500 * time.Millisecond)
		select {
		case <-p.done:
			t.Fatalf("%s: exited while the driver runs: %s", tc.name, p.out.String())
		default:
		}
		if code := p.sigterm(t, 5*time.Second); code != 0 {
			t.Errorf("%s: exit code %d after SIGTERM, want 0\n%s", tc.name, code, p.out.String())
		}
	}
	if got := auditCounts(t, ns); len(got) != 0 {
		t.Fatalf("requests on Services by a runtime that refused its selector: %v", got)
	}

	// The id from the environment, the selector expanded: bind, then SIGTERM withdraws.
	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	dir := t.TempDir()
	p := startProc(t, append(env, sidecar.EnvAppID+"="+appID), expand(sharedRunArgs(dir), sidecar.EnvAppID, appID)...)
	testcluster.WaitFor(t, 10*time.Second, "the bind", func() (bool, string) {
		sel, port := selector(t, c, ns, svc)
		return sel[names.LabelAppSelector] == appID && port == ui.Port, fmt.Sprint(sel, port)
	})
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 0 || s.Labels[sidecar.LabelBoundPod] != string(pod.UID) {
		t.Errorf("bound Service: ownerReferences %v, labels %v", s.OwnerReferences, s.Labels)
	}
	if code := p.sigterm(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%s", code, p.out.String())
	}
	if sel, _ := selector(t, c, ns, svc); sel[names.WithdrawnSelectorKey] != string(pod.UID) || len(sel) != 1 {
		t.Errorf("SIGTERM did not withdraw: selector %v\n%s", sel, p.out.String())
	}
	if l := termLogOf(dir); l != "" {
		t.Errorf("termination log %q after a clean run", l)
	}
	if got, want := auditCounts(t, ns), map[string]int{"patch": 2, "patch 200": 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit %v, want %v: one PATCH per bind and per withdrawal, no GET", got, want)
	}
}

// proxy is a TCP relay to the API server that can be cut, to make it unreachable for the
// runtime alone.
type proxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

// cut stops accepting and drops every relayed connection.
func (p *proxy) cut() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// TestExitCodes: the runtime's exit status after SIGTERM, measured on the binary. 0 when
// nothing was ever bound (no UI), and 0 when the API server is unreachable at the end (the
// withdrawal cannot be acknowledged: the reason goes to the log and the termination log). An
// exit code > 0 of a native sidecar marks an Apache-operator application Failed
// (BaseAppDriverObserver.observeDriverTermination); the bound-and-withdrawn case is TestBinary's.
func TestExitCodes(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	pod := setup(t, c, ns, appID, "wordcount-ui-svc")
	env := []string{"POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}
	args := func(dir string, port int) []string {
		return append(sidecar.Config{Service: "wordcount-ui-svc", AppID: appID, UIPort: port, MaxRetries: 0}.Args(),
			"--socket=", "--install=", "--state-file=", "--termination-log="+filepath.Join(dir, "termination-log"), "--shutdown-timeout=2s")
	}

	// No UI: nothing bound (the withdrawal at start is refused by the holder guard: this Pod
	// never bound the Service), SIGTERM → 0.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freePort := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir := t.TempDir()
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	p := startProc(t, append(env, "KUBECONFIG="+kubeconfig), args(dir, freePort)...)
	time.Sleep(time.Second)
	if code := p.sigterm(t, 5*time.Second); code != 0 {
		t.Errorf("no UI: exit code %d after SIGTERM, want 0\n%s", code, p.out.String())
	}

	// Bound, then the API server unreachable: SIGTERM → the withdrawal fails within
	// --shutdown-timeout → 0, the reason in the termination log.
	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	sa := c.ServiceAccountConfig(t, ns, "spark")
	px := startProxy(t, strings.TrimSuffix(strings.TrimPrefix(sa.Host, "https://"), "/"))
	viaProxy := rest.CopyConfig(sa)
	viaProxy.Host = "https://" + px.l.Addr().String()
	dir = t.TempDir()
	p = startProc(t, append(env, "KUBECONFIG="+c.KubeconfigFile(t, viaProxy)), args(dir, ui.Port)...)
	testcluster.WaitFor(t, 10*time.Second, "the bind", func() (bool, string) {
		sel, port := selector(t, c, ns, "wordcount-ui-svc")
		return sel[names.LabelAppSelector] == appID && port == ui.Port, fmt.Sprint(sel, port, p.out.String())
	})
	px.cut()
	start := time.Now()
	code := p.sigterm(t, 10*time.Second)
	took := time.Since(start)
	t.Logf("API server unreachable at the end: exit code %d after %s", code, took.Round(time.Millisecond))
	if code != 0 {
		t.Errorf("API server unreachable at the end: exit code %d after SIGTERM, want 0\n%s", code, p.out.String())
	}
	if took > 5*time.Second {
		t.Errorf("took %s to exit after SIGTERM with --shutdown-timeout=2s", took)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "termination-log")); !strings.Contains(string(b), "on SIGTERM: withdrawal not acknowledged") {
		t.Errorf("termination log %q", b)
	}
	if sel, _ := selector(t, c, ns, "wordcount-ui-svc"); sel[names.LabelAppSelector] != appID {
		t.Errorf("selector %v: the withdrawal went through the cut proxy?", sel)
	}
}
