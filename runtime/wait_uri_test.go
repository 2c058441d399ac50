package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/runtime/waituricmd"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// waitURIProc is `sparkui-runtime wait-uri` running.
type waitURIProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
}

func startWaitURI(t *testing.T, kubeconfig string, args ...string) *waitURIProc {
	t.Helper()
	w := &waitURIProc{done: make(chan struct{})}
	w.cmd = exec.Command(binary, append([]string{waituricmd.Command, "--kubeconfig=" + kubeconfig}, args...)...)
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() { _ = w.cmd.Process.Kill(); <-w.done })
	return w
}

func (w *waitURIProc) wait(t *testing.T, within time.Duration) (code int, stdout, stderr string) {
	t.Helper()
	select {
	case <-w.done:
		return w.cmd.ProcessState.ExitCode(), w.stdout.String(), w.stderr.String()
	case <-time.After(within):
		t.Fatalf("wait-uri still running after %s", within)
		return 0, "", ""
	}
}

// TestWaitURI: the built binary in nodePort mode publishes the URI, `wait-uri` (as the
// ServiceAccount: get on the Service is all it needs) prints it; it fails on a timeout, on a
// withdrawn UI, and when the Service is deleted.
func TestWaitURI(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID, svc := "spark-"+ns, "wordcount-ui-svc"
	pod := setup(t, c, ns, appID, svc)
	ctx := testcluster.Context(t, 60*time.Second)
	s, err := c.Client.CoreV1().Services(ns).Patch(ctx, svc, types.MergePatchType, []byte(`{"spec":{"type":"NodePort"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodePort := s.Spec.Ports[0].NodePort
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	svcArgs := []string{"--namespace=" + ns, "--service=" + svc}

	// Not bound yet: a timeout, with what it saw.
	start := time.Now()
	code, out, errOut := startWaitURI(t, kubeconfig, append(svcArgs, "--timeout=1s")...).wait(t, 10*time.Second)
	if code != verb.ExitFailed || out != "" || !strings.Contains(errOut, "no external URI after 1s") || !strings.Contains(errOut, "not bound yet") {
		t.Errorf("timeout: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("--timeout=1s took %s", took)
	}

	waiter := startWaitURI(t, kubeconfig, append(svcArgs, "--timeout=30s")...)
	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	dir := t.TempDir()
	// --host-network: the stand-in UIs of every test share this machine's network namespace, as
	// drivers share a node's under hostNetwork: identity must be proven (a random port probes them all).
	args := append(sidecar.Config{Service: svc, AppID: appID, MaxRetries: 16, ExternalURI: "nodePort", HostNetwork: true}.Args(),
		"--socket=", "--install=", "--state-file=", "--termination-log="+dir+"/termination-log")
	env := []string{"KUBECONFIG=" + kubeconfig, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID), sidecar.EnvHostIP + "=192.0.2.10"}
	p := startProc(t, env, args...)
	code, out, errOut = waiter.wait(t, 30*time.Second)
	if want := fmt.Sprintf("http://192.0.2.10:%d\n", nodePort); code != verb.ExitOK || out != want {
		t.Fatalf("wait-uri: exit %d, stdout %q (want %q), stderr %q\nruntime:\n%s", code, out, want, errOut, p.out.String())
	}

	if code := p.sigterm(t, 15*time.Second); code != verb.ExitOK {
		t.Fatalf("runtime exit %d\n%s", code, p.out.String())
	}
	code, out, errOut = startWaitURI(t, kubeconfig, svcArgs...).wait(t, 10*time.Second)
	if code != verb.ExitWithdrawn || out != "" || !strings.Contains(errOut, "withdrawn") {
		t.Errorf("withdrawn: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Unbound again (as created), then deleted while wait-uri waits.
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, svc, types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/selector"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Deleted only once wait-uri has seen it (an answered get in the audit log): a Service
	// missing from the start is waited for, not reported deleted, and on a loaded machine the
	// process can take longer to start than any fixed pause.
	seen := auditCounts(t, ns)["get 200"]
	waiter = startWaitURI(t, kubeconfig, svcArgs...)
	for deadline := time.Now().Add(15 * time.Second); auditCounts(t, ns)["get 200"] == seen; {
		if time.Now().After(deadline) {
			t.Fatal("wait-uri made no get on the Service within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Client.CoreV1().Services(ns).Delete(ctx, svc, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = waiter.wait(t, 15*time.Second)
	if code != verb.ExitDeleted || out != "" || !strings.Contains(errOut, "deleted") {
		t.Errorf("deleted: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestWaitURIHandedOff: the built runtime, told the History Server through its environment
// as the function writes it, hands the Service off at SIGTERM; wait-uri then prints the
// application's History Server page and exits 6.
func TestWaitURIHandedOff(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID, svc := "spark-"+ns, "wordcount-ui-svc"
	pod := setup(t, c, ns, appID, svc)
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	dir := t.TempDir()
	args := append(sidecar.Config{Service: svc, AppID: appID, MaxRetries: 16, HostNetwork: true}.Args(),
		"--socket=", "--install=", "--state-file=", "--termination-log="+dir+"/termination-log")
	env := []string{"KUBECONFIG=" + kubeconfig, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}
	for _, e := range (sidecar.History{URL: "https://shs.example.com", RedirectorPort: 8080}).Env() {
		env = append(env, e[0]+"="+e[1])
	}
	p := startProc(t, env, args...)
	testcluster.WaitFor(t, 20*time.Second, "the bind", func() (bool, string) {
		s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 5*time.Second), svc, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return s.Spec.Selector["spark-app-selector"] == appID, fmt.Sprint(s.Spec.Selector)
	})
	if code := p.sigterm(t, 15*time.Second); code != verb.ExitOK {
		t.Fatalf("runtime exit %d\n%s", code, p.out.String())
	}
	code, out, errOut := startWaitURI(t, kubeconfig, "--namespace="+ns, "--service="+svc).wait(t, 10*time.Second)
	if want := "https://shs.example.com/history/" + appID + "/\n"; code != verb.ExitHandedOff || out != want || !strings.Contains(errOut, "handed off to the History Server") {
		t.Errorf("handed off: exit %d, stdout %q (want %q), stderr %q\nruntime:\n%s", code, out, want, errOut, p.out.String())
	}
}

// TestWaitURIWaiting: a Service an earlier driver Pod withdrew, whose next runtime says it
// waits (docs/service-status.md, as runtime/agent TestWaitingLeavesRoutedServices writes it):
// wait-uri waits instead of reporting the withdrawal, says on stderr that the runtime waits and
// why, and names the reason in its timeout.
func TestWaitURIWaiting(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID, svc := "spark-"+ns, "wordcount-ui-svc"
	setup(t, c, ns, appID, svc)
	patch := `{"metadata":{"annotations":{"sparkui.dev/ui-state":"waiting","sparkui.dev/ui-since":"2026-12-05T18:31:16Z",` +
		`"sparkui.dev/ui-pod":"wordcount-2-driver","sparkui.dev/ui-reason":"port 4040: TLS the runtime cannot verify; not bound"}},` +
		`"spec":{"selector":{"sparkui.dev/withdrawn":"0b7d5c9e-earlier-pod"}}}`
	if _, err := c.Client.CoreV1().Services(ns).Patch(testcluster.Context(t, 30*time.Second), svc, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	code, out, errOut := startWaitURI(t, kubeconfig, "--namespace="+ns, "--service="+svc, "--timeout=2s").wait(t, 15*time.Second)
	const said = "the runtime is waiting since 2026-12-05T18:31:16Z (driver Pod wordcount-2-driver): port 4040: TLS the runtime cannot verify; not bound"
	if code != verb.ExitFailed || out != "" || strings.Count(errOut, said) != 2 || !strings.Contains(errOut, "no external URI after 2s") {
		t.Errorf("waiting: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	t.Logf("wait-uri's stderr:\n%s", errOut)
}
