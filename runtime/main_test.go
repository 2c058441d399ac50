package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// binary is sparkui-runtime built as `make build` builds it.
var binary string

// The tests share one control plane whose audit log records every request on Services.
var (
	clusterOpts testcluster.Options
	auditLog    string
)

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources:
  - group: ""
    resources: ["services"]
- level: None
`

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sparkui-runtime-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	auditLog = filepath.Join(dir, "audit.log")
	clusterOpts = testcluster.Options{APIServerArgs: map[string][]string{
		"audit-policy-file": {policy}, "audit-log-path": {auditLog}, "audit-log-mode": {"blocking"},
	}}
	binary = filepath.Join(dir, "sparkui-runtime")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building sparkui-runtime: %v\n%s", err, out)
		os.Exit(1)
	}
	code := testcluster.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// proc is the runtime running as a subprocess.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuf
	done chan struct{}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startProc(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startProcOf(t, binary, env, args...)
}

// startProcOf runs another build of the runtime (TestSkew's older contract).
func startProcOf(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(podEnviron(), env...)
	p := &proc{cmd: cmd, out: &syncBuf{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *proc) sigterm(t *testing.T, within time.Duration) int {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("still running %s after SIGTERM\n%s", within, p.out.String())
		return -1
	}
}

// setup creates what sparkui-fn emits for a spark-submit application (UI Service, Role,
// RoleBinding) and the driver Pod, and returns the Pod.
func setup(t *testing.T, c *testcluster.Cluster, ns, appID, svc string) *corev1.Pod {
	return createEmitted(t, c, ns, "wordcount-driver", svc, appID,
		map[string]string{names.LabelManagedBy: names.ManagedByValue, names.LabelAppSelector: appID})
}

// createEmitted creates a driver Pod podName labelled spark-app-selector=appID (as Spark
// labels its driver), and what sparkui-fn emits for it: the UI Service svc with svcLabels and
// no targetPort (the function declares none), and the Role and RoleBinding granting the
// driver's ServiceAccount "spark" the runtime's verbs on exactly that Service.
func createEmitted(t *testing.T, c *testcluster.Cluster, ns, podName, svc, appID string, svcLabels map[string]string) *corev1.Pod {
	t.Helper()
	ctx := testcluster.Context(t, 30*time.Second)
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: ns, Labels: map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}},
		Spec:       corev1.PodSpec{ServiceAccountName: "spark", Containers: []corev1.Container{{Name: names.DriverContainer, Image: "apache/spark:4.0.0"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		// The annotation every UI Service sparkui-fn writes carries (Flux's ssa IfNotPresent):
		// the bind's status annotations go into that map in the same PATCH.
		ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: ns, Labels: svcLabels,
			Annotations: map[string]string{names.AnnotationFluxSSA: names.FluxSSAIfNotPresent}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: names.UIPortName, Port: 4040}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := sidecar.DefaultRole(svc)
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{svc}, Verbs: sidecar.RuntimeVerbs}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "spark", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

func selector(t *testing.T, c *testcluster.Cluster, ns, svc string) (map[string]string, int) {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Spec.Selector, s.Spec.Ports[0].TargetPort.IntValue()
}

// procStat returns the process's CPU time (user+system) and resident set size.
func procStat(t *testing.T, pid int) (cpu time.Duration, rss int64) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat(5)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	cpu = time.Duration(ut+st) * time.Second / 100 // USER_HZ
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return cpu, rss
}

// TestBinary runs the built binary as the sidecar does: the container args sparkui-fn
// emits, $KUBECONFIG for a ServiceAccount under the function's Role, then the preStop hook
// from the installed copy, and SIGTERM. It measures RSS and idle CPU while bound.
func TestBinary(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID, svc := "spark-"+ns, "wordcount-ui-svc"
	pod := setup(t, c, ns, appID, svc)
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.StartingUp})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()

	shared, err := os.MkdirTemp("", "sui") // the emptyDir; short for the socket path
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	termLog := filepath.Join(shared, "termination-log")
	sock := filepath.Join(shared, "runtime.sock")
	installed := filepath.Join(shared, "sparkui-runtime")
	// --host-network: the stand-in UIs of every test share this machine's network namespace, as
	// drivers share a node's under hostNetwork: identity must be proven (a random port probes them all).
	args := append(sidecar.Config{Service: svc, AppID: appID, UIPort: 0, MaxRetries: 16, HostNetwork: true}.Args(),
		"--socket="+sock, "--install="+installed, "--state-file="+filepath.Join(shared, "bound-port"),
		"--termination-log="+termLog, "--log-format=json")
	env := []string{"KUBECONFIG=" + kubeconfig, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}
	p := startProc(t, env, args...)

	// Copied for the preStop hook: same bytes, 0755; socket 0666.
	testcluster.WaitFor(t, 10*time.Second, "the installed binary and the socket", func() (bool, string) {
		st, err1 := os.Stat(installed)
		ss, err2 := os.Stat(sock)
		return err1 == nil && err2 == nil && st.Mode().Perm() == 0o755 && ss.Mode().Perm() == 0o666, fmt.Sprint(err1, err2)
	})
	want, _ := os.ReadFile(binary)
	if got, _ := os.ReadFile(installed); !bytes.Equal(got, want) {
		t.Fatal("the installed binary differs from the running one")
	}

	time.Sleep(300 * time.Millisecond)
	if sel, _ := selector(t, c, ns, svc); len(sel) != 0 {
		t.Fatalf("bound while the UI was starting up: %v", sel)
	}
	ui.Set(fakespark.Ready)
	testcluster.WaitFor(t, 10*time.Second, "the bind", func() (bool, string) {
		sel, port := selector(t, c, ns, svc)
		return sel[names.LabelAppSelector] == appID && port == ui.Port, fmt.Sprint(sel, port)
	})

	// Idle while bound: RSS and CPU.
	time.Sleep(time.Second)
	cpu0, _ := procStat(t, p.cmd.Process.Pid)
	const window = 5 * time.Second
	time.Sleep(window)
	cpu1, rss := procStat(t, p.cmd.Process.Pid)
	idle := float64(cpu1-cpu0) / float64(window) * 100
	t.Logf("sparkui-runtime bound and idle at the default 100ms poll: RSS %.1f MiB, CPU %.2f%% of a core over %s (binary %.1f MiB)",
		float64(rss)/(1<<20), idle, window, float64(len(want))/(1<<20))
	// Targets: RSS ≤ 28 MiB (20 before contract 1.2: client-go's tools/events imports the
	// whole clientset and its scheme, 24.4 MiB measured; docs/performance.md), idle CPU ≤
	// 0.5 % of a core. CPU time is counted in 10 ms ticks (0.2 % of this window each): allow
	// two more ticks for a loaded machine.
	if rss > 28<<20 {
		t.Errorf("RSS %.1f MiB, target 28 MiB", float64(rss)/(1<<20))
	}
	if idle > 1 {
		t.Errorf("idle CPU %.2f%% of a core, target 0.5%%", idle)
	}

	// The preStop hook, from the installed copy, as the driver container runs it.
	hook := sidecar.PreStopCommand()
	hook[0] = installed
	for i, a := range hook {
		if strings.HasPrefix(a, "--socket=") {
			hook[i] = "--socket=" + sock
		}
	}
	start := time.Now()
	out, err := exec.Command(hook[0], hook[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("preStop hook: %v\n%s\nruntime:\n%s", err, out, p.out.String())
	}
	t.Logf("preStop hook returned in %s: %s", time.Since(start).Round(time.Millisecond), bytes.TrimSpace(out))
	if sel, _ := selector(t, c, ns, svc); sel[names.WithdrawnSelectorKey] != string(pod.UID) || len(sel) != 1 {
		t.Fatalf("the hook returned before the withdrawal was acknowledged: selector %v", sel)
	}
	if code := p.sigterm(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%s", code, p.out.String())
	}
	checkJSONLogs(t, p.out.String())

	// The container restarts (the UI is still up): it binds again; SIGTERM withdraws.
	p2 := startProc(t, env, args...)
	testcluster.WaitFor(t, 10*time.Second, "the bind after restart", func() (bool, string) {
		sel, port := selector(t, c, ns, svc)
		return sel[names.LabelAppSelector] == appID && port == ui.Port, fmt.Sprint(sel, port)
	})
	if code := p2.sigterm(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM\n%s", code, p2.out.String())
	}
	if sel, _ := selector(t, c, ns, svc); sel[names.WithdrawnSelectorKey] != string(pod.UID) {
		t.Fatalf("SIGTERM did not withdraw: selector %v\n%s", sel, p2.out.String())
	}
	if b, _ := os.ReadFile(termLog); len(b) != 0 {
		t.Errorf("termination log %q after a clean run", b)
	}
}

func checkJSONLogs(t *testing.T, out string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	var msgs []string
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Errorf("not a JSON log line: %q", sc.Text())
			continue
		}
		msgs = append(msgs, fmt.Sprint(rec["msg"]))
	}
	joined := strings.Join(msgs, "|")
	for _, want := range []string{"sparkui-runtime starting", "UI found", "UI Service bound", "withdrawing for good", "UI Service withdrawn", "stopped"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q log line in %s", want, joined)
		}
	}
}

// TestWithdrawCommand: nobody listening → non-zero at once; a runtime that does not answer →
// non-zero after --timeout, never later.
func TestWithdrawCommand(t *testing.T) {
	dir, err := os.MkdirTemp("", "sui")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	out, err := exec.Command(binary, "withdraw", "--socket="+filepath.Join(dir, "none.sock"), "--timeout=10s").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != verb.ExitUnreachable || time.Since(start) > 2*time.Second {
		t.Errorf("unreachable runtime: %v after %s: %s", err, time.Since(start), out)
	}
	if !strings.Contains(string(out), "unreachable") {
		t.Errorf("output %q", out)
	}

	// A hung runtime: accepts, never answers.
	sock := filepath.Join(dir, "hung.sock")
	l, err := netListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start = time.Now()
	out, err = exec.Command(binary, "withdraw", "--socket="+sock, "--timeout=500ms").CombinedOutput()
	took := time.Since(start)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != verb.ExitFailed || took > 3*time.Second {
		t.Errorf("hung runtime: %v after %s: %s", err, took, out)
	}
}
