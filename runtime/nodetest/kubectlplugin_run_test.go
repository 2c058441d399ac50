package nodetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// plugin runs the built kubectl-sparkui (and the real kubectl) against the node's cluster,
// as a user on the host does: through the API server on the host's loopback.
type plugin struct {
	t       *testing.T
	bin, kc string
}

func newPlugin(t *testing.T, n *testnode.Node) *plugin {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-sparkui")
	if err := os.WriteFile(bin, mustBuild(t, "./kubectlplugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &plugin{t: t, bin: bin, kc: n.Cluster.KubeconfigFile(t, n.Cluster.Config)}
}

func (p *plugin) run(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, append(args, "--kubeconfig", p.kc)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	p.t.Logf("$ kubectl sparkui %s   (%v)\n%s%s", strings.Join(args, " "), exitOf(err), out.String(), errOut.String())
	return out.String(), errOut.String(), err
}

func exitOf(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

// ok2 runs the plugin, which must succeed, and returns its stdout and stderr.
func (p *plugin) ok2(args ...string) (string, string) {
	p.t.Helper()
	out, errOut, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("kubectl sparkui %v: %v\n%s%s", args, err, out, errOut)
	}
	return out, errOut
}

func (p *plugin) ok(args ...string) string {
	p.t.Helper()
	out, _ := p.ok2(args...)
	return out
}

// fails runs the plugin, which must exit 1, and returns its stderr.
func (p *plugin) fails(args ...string) string {
	p.t.Helper()
	out, errOut, err := p.run(args...)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		p.t.Errorf("kubectl sparkui %v: %v, want exit 1\n%s%s", args, err, out, errOut)
	}
	return errOut
}

// describe logs the real kubectl's `describe pod`, for the record beside the plugin's.
func (p *plugin) describe(ns, pod string) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		p.t.Errorf("kubectl is not installed (.ci/setup.sh installs it): %v", err)
		return
	}
	out, err := exec.Command(kubectl, "--kubeconfig", p.kc, "describe", "pod", pod, "-n", ns).CombinedOutput()
	p.t.Logf("$ kubectl describe pod %s -n %s   (%v)\n%s", pod, ns, exitOf(err), out)
}

// whyLines runs `why` on a and wants these lines (ages normalised): the application, its
// carrier, the state from the spec, the driver Pod in phase, for a running Pod its running
// sidecar, and more.
func whyLines(t *testing.T, p *plugin, a *pluginApp, pod, phase, state string, more ...string) {
	t.Helper()
	why := regexp.MustCompile(`\b\d+(s|m|h|m\d+s)\b`).ReplaceAllString(p.ok("why", a.name, "-n", a.ns), "AGE")
	want := append([]string{
		"Application:     " + a.name + " (namespace " + a.ns + ")",
		"Carrier:         " + a.carrier,
		"UI Service:      " + a.svc + " (ClusterIP, port ",
		"State:           " + state,
		"Driver Pod:      " + pod + " (" + phase + ", AGE ago; ",
	}, more...)
	if phase == "Running" {
		want = append(want, "Sidecar:         sparkui-runtime running, restarts 0")
	}
	for _, line := range want {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line)).MatchString(why) {
			t.Errorf("why %s lacks a line starting %q:\n%s", a.name, line, why)
		}
	}
}

// openForwards runs `open` on a bound application: it must print a local URL and forward
// it, through the API server, the kubelet and containerd's port-forward, to the port the UI
// bound; a GET of the REST API there answers as this application, and only it. ^C ends it.
func openForwards(t *testing.T, p *plugin, a *pluginApp) {
	t.Helper()
	cmd := exec.Command(p.bin, "open", a.name, "-n", a.ns, "--kubeconfig", p.kc)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { exited <- cmd.Wait() }()
	var stopped bool
	stop := func() error {
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			return err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("still forwarding 10 s after SIGINT")
		}
	}
	// A failed wait below ends the test: the forwarder goes, and what it said is logged.
	defer func() {
		if !stopped {
			err := stop()
			t.Logf("open %s stopped (%v); its stderr:\n%s", a.name, exitOf(err), errOut.String())
		}
	}()
	var url string
	select {
	case url = <-lines:
	case <-time.After(time.Minute):
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(url) {
		err := stop()
		t.Fatalf("open %s: printed %q (%v), want http://127.0.0.1:<port>/\n%s", a.name, url, err, errOut.String())
	}
	var code int
	var body string
	client := &http.Client{Timeout: 5 * time.Second}
	testcluster.WaitFor(t, 30*time.Second, "the UI through `open`'s port "+url, func() (bool, string) {
		resp, err := client.Get(url + "api/v1/applications")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		code, body = resp.StatusCode, string(b)
		return code == 200, fmt.Sprintf("%d %s", code, body)
	})
	if !strings.Contains(body, `"id":"`+a.run.appID+`"`) || strings.Count(body, `"id":`) != 1 {
		t.Errorf("open %s: GET %sapi/v1/applications answered %d %s, want only application %s", a.name, url, code, body, a.run.appID)
	}
	err = stop()
	t.Logf("$ kubectl sparkui open %s -n %s   (after SIGINT: %v)\n%s\n%s\nGET %sapi/v1/applications → %d %s",
		a.name, a.ns, exitOf(err), url, errOut.String(), url, code, body)
	if err != nil {
		t.Errorf("open %s after SIGINT: %v, want exit 0", a.name, err)
	}
	for _, want := range []string{
		fmt.Sprintf("Forwarding from %s -> %s\n", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"), a.run.uiPort),
		fmt.Sprintf("%s: Pod %s, UI port %s; forwarding until interrupted\n", a.name, a.run.pod.Name, a.run.uiPort),
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("open %s: stderr lacks %q:\n%s", a.name, want, errOut.String())
		}
	}
}

// handedOff waits for a's run to end by itself and its Service to be handed off: the
// redirector's selector, targetPort the redirector's port, the History link annotated; the
// Service never routed to anything but the run, nothing, or the redirector.
func handedOff(t *testing.T, n *testnode.Node, a *pluginApp, ended time.Time) {
	t.Helper()
	ctx := testcluster.Context(t, 3*time.Minute)
	redirector := map[string]string{"sparkui.dev/history-redirector": "true"}
	var h uiState
	testcluster.WaitFor(t, 2*time.Minute, a.name+" handed off", func() (bool, string) {
		var ok bool
		h, ok = a.tl.first(func(s uiState) bool { return equal(s.Selector, redirector) && s.TargetPort == "8080" })
		return ok, a.tl.String()
	})
	testcluster.WaitFor(t, time.Minute, a.name+"'s driver Pod Succeeded", func() (bool, string) {
		p, err := n.Cluster.Client.CoreV1().Pods(a.ns).Get(ctx, a.run.pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodSucceeded, podWhy(p)
	})
	t.Logf("%s: end of run → handed off %s, → Pod Succeeded %s", a.name, h.At.Sub(ended).Round(time.Millisecond), time.Since(ended).Round(time.Millisecond))
	svc, err := n.Cluster.Client.CoreV1().Services(a.ns).Get(ctx, a.svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := historyURL + "/history/" + a.run.appID + "/"; svc.Annotations["sparkui.dev/history-uri"] != want {
		t.Errorf("%s: sparkui.dev/history-uri %q, want %q", a.svc, svc.Annotations["sparkui.dev/history-uri"], want)
	}
	for _, s := range a.tl.snapshot() {
		if len(s.Selector) > 0 && !equal(s.Selector, redirector) && !(s.TargetPort == a.run.uiPort && equal(s.Selector, a.run.bound.Selector)) {
			t.Errorf("%s routed to neither its run nor the redirector: %s", a.svc, s)
		}
	}
}

// neverBound waits for a's driver Pod Running and its UI listening, and wants its Service
// never given a selector (called once the other applications have long bound).
func neverBound(t *testing.T, n *testnode.Node, a *pluginApp) *corev1.Pod {
	t.Helper()
	ctx := testcluster.Context(t, 3*time.Minute)
	var pod *corev1.Pod
	testcluster.WaitFor(t, 2*time.Minute, a.name+"'s driver Pod Running", func() (bool, string) {
		l, err := n.Cluster.Client.CoreV1().Pods(a.ns).List(ctx, metav1.ListOptions{LabelSelector: "sparkui.dev/application=" + a.name})
		if err != nil || len(l.Items) != 1 {
			return false, fmt.Sprint(err, l)
		}
		pod = &l.Items[0]
		return pod.Status.Phase == corev1.PodRunning, podWhy(pod)
	})
	listening := logLine(t, n, a.ns, pod.Name, driverContainer(t, &pod.Spec), regexp.MustCompile(`listening (\d+) app`), time.Minute)
	svc, err := n.Cluster.Client.CoreV1().Services(a.ns).Get(ctx, a.svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Selector) != 0 {
		t.Errorf("%s has selector %v: the UI on %s never proved itself", a.svc, svc.Spec.Selector, listening[1])
	}
	for _, s := range a.tl.snapshot() {
		if len(s.Selector) != 0 {
			t.Errorf("%s was given a selector: %s", a.svc, s)
		}
	}
	return pod
}
