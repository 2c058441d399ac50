package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/redirectcmd"
	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// redirectorManifest is the example users apply per namespace.
const redirectorManifest = "../examples/history-redirector/redirector.yaml"

// exampleRedirector reads the example's objects.
func exampleRedirector(t *testing.T) (sa *corev1.ServiceAccount, role *rbacv1.Role, rb *rbacv1.RoleBinding, dep *appsv1.Deployment) {
	t.Helper()
	src, err := os.ReadFile(redirectorManifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(src), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var into any
		switch meta.Kind {
		case "ServiceAccount":
			sa = &corev1.ServiceAccount{}
			into = sa
		case "Role":
			role = &rbacv1.Role{}
			into = role
		case "RoleBinding":
			rb = &rbacv1.RoleBinding{}
			into = rb
		case "Deployment":
			dep = &appsv1.Deployment{}
			into = dep
		default:
			t.Fatalf("%s: unexpected kind %q", redirectorManifest, meta.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatal(err)
		}
	}
	if sa == nil || role == nil || rb == nil || dep == nil {
		t.Fatalf("%s lacks one of ServiceAccount, Role, RoleBinding, Deployment", redirectorManifest)
	}
	return sa, role, rb, dep
}

// installRedirectorRBAC creates the example's ServiceAccount, Role and RoleBinding in ns and
// returns a kubeconfig of that ServiceAccount.
func installRedirectorRBAC(t *testing.T, c *testcluster.Cluster, ns string) string {
	t.Helper()
	ctx := testcluster.Context(t, 30*time.Second)
	sa, role, rb, _ := exampleRedirector(t)
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, sa.Name))
}

// redirectorUnderTest is the built redirector started against the test cluster.
type redirectorUnderTest struct {
	*proc
	port int    // the redirect port (the handed-off Services' targetPort)
	base string // http://127.0.0.1:<port>
}

// startRedirector runs the built redirector with the example's RBAC in ns and ownURL as its
// History Server URL, and waits until it is ready.
func startRedirector(t *testing.T, c *testcluster.Cluster, ns, ownURL string) redirectorUnderTest {
	t.Helper()
	port, health := freePort(t), freePort(t)
	p := startProc(t, []string{"KUBECONFIG=" + installRedirectorRBAC(t, c, ns), "POD_NAMESPACE=" + ns, "SPARKUI_HISTORY_URL=" + ownURL},
		redirectcmd.Command, fmt.Sprintf("--redirector-port=%d", port), fmt.Sprintf("--health-port=%d", health))
	testcluster.WaitFor(t, 20*time.Second, "the redirector to be ready", func() (bool, string) {
		code, _, body, err := get(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), "x", nil)
		return err == nil && code == 200, fmt.Sprint(code, body, err, p.out.String())
	})
	return redirectorUnderTest{proc: p, port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
}

// startHandoffRuntime runs the built runtime for pod's application under hostNetwork, as the
// ServiceAccount "spark", with a hand-off to redirectorPort configured. The History Server
// URL it writes (https://shs.example.com) is not the redirector's: redirects must not use it.
func startHandoffRuntime(t *testing.T, c *testcluster.Cluster, ns string, pod *corev1.Pod, svc, appID string, redirectorPort int) *proc {
	t.Helper()
	args := append(sidecar.Config{Service: svc, AppID: appID, MaxRetries: 16, HostNetwork: true}.Args(),
		"--socket=", "--install=", "--state-file=", "--termination-log="+t.TempDir()+"/termination-log")
	env := []string{"KUBECONFIG=" + c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark")), "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}
	for _, e := range (sidecar.History{URL: "https://shs.example.com", RedirectorPort: redirectorPort}).Env() {
		env = append(env, e[0]+"="+e[1])
	}
	return startProc(t, env, args...)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// noRedirects is a client that reports redirects instead of following them.
var noRedirects = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, url, host string, hdr map[string]string) (code int, location, body string, err error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b), nil
}

// TestRedirectorBinary: the built binary's `redirect` (as the example's ServiceAccount, RBAC
// from the example) answers 404 while the UI is live; the built runtime, told the History
// Server through its environment, hands the Service off at SIGTERM; the redirector then
// answers requests through the Service's route with 302 to the application's History Server
// page, and 404 again once a driver binds the Service back. It made no API request per HTTP
// request: its Service requests are one list and watches.
func TestRedirectorBinary(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID, svc := "spark-"+ns, "wordcount-ui-svc"
	pod := setup(t, c, ns, appID, svc)
	ctx := testcluster.Context(t, 60*time.Second)
	// The route the function wrote for the Service (build-time facts).
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, svc, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"sparkui.dev/route-host":"spark.example.com","sparkui.dev/route-prefix":"/apps/wordcount"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// The redirector's own History Server URL, not the one the runtime writes: the redirect
	// goes to the redirector's.
	const ownURL = "https://history.example.org/shs"
	redirector := startRedirector(t, c, ns, ownURL)
	port, base := redirector.port, redirector.base
	if code, loc, body, err := get(t, base+"/apps/wordcount/jobs/", "spark.example.com", nil); err != nil || code != 404 || loc != "" {
		t.Fatalf("before the hand-off: %d %q %q %v", code, loc, body, err)
	}

	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	rt := startHandoffRuntime(t, c, ns, pod, svc, appID, port)
	testcluster.WaitFor(t, 20*time.Second, "the bind", func() (bool, string) {
		sel, _ := selector(t, c, ns, svc)
		return sel["spark-app-selector"] == appID, fmt.Sprint(sel)
	})
	if code, _, _, _ := get(t, base+"/apps/wordcount/jobs/", "spark.example.com", nil); code != 404 {
		t.Errorf("while bound: %d, want 404", code)
	}
	if code := rt.sigterm(t, 15*time.Second); code != verb.ExitOK {
		t.Fatalf("runtime exit %d\n%s", code, rt.out.String())
	}
	if sel, tp := selector(t, c, ns, svc); len(sel) != 1 || sel["sparkui.dev/history-redirector"] != "true" || tp != port {
		t.Fatalf("after SIGTERM: selector %v targetPort %d\n%s", sel, tp, rt.out.String())
	}

	if uri := annotation(t, c, ns, svc, "sparkui.dev/history-uri"); uri != "https://shs.example.com/history/"+appID+"/" {
		t.Fatalf("history-uri %q", uri)
	}
	want := ownURL + "/history/" + appID + "/"
	testcluster.WaitFor(t, 10*time.Second, "the 302", func() (bool, string) {
		code, loc, body, err := get(t, base+"/apps/wordcount/jobs/", "spark.example.com:443", nil)
		return err == nil && code == 302 && loc == want, fmt.Sprint(code, " ", loc, " ", body, err)
	})
	// The route names its Service (X-Sparkui-Service): that one, whatever the host and path.
	if code, loc, _, err := get(t, base+"/", "elsewhere.example.com", map[string]string{"X-Sparkui-Service": svc}); err != nil || code != 302 || loc != want {
		t.Errorf("X-Sparkui-Service: %d %q %v", code, loc, err)
	}
	// A route that strips the prefix says it in X-Forwarded-Context.
	if code, loc, _, err := get(t, base+"/", "Spark.Example.com", map[string]string{"X-Forwarded-Context": "/apps/wordcount"}); err != nil || code != 302 || loc != want {
		t.Errorf("X-Forwarded-Context: %d %q %v", code, loc, err)
	}
	// Cost: redirects are answered from memory (the audit check below: no API request each).
	cpu0, _ := procStat(t, redirector.cmd.Process.Pid)
	const n = 2000
	start := time.Now()
	for i := 0; i < n; i++ {
		if code, _, _, err := get(t, base+"/apps/wordcount/jobs/", "spark.example.com", nil); err != nil || code != 302 {
			t.Fatalf("request %d: %d %v", i, code, err)
		}
	}
	took := time.Since(start)
	cpu1, rss := procStat(t, redirector.cmd.Process.Pid)
	t.Logf("redirector: %d redirects in %s (%.0f µs each, client included), %s CPU, RSS %.1f MiB",
		n, took.Round(time.Millisecond), float64(took.Microseconds())/n, (cpu1 - cpu0).Round(time.Millisecond), float64(rss)/(1<<20))
	// Another host, another prefix: not this application's route.
	if code, _, body, _ := get(t, base+"/apps/wordcount/", "other.example.com", nil); code != 404 || !strings.Contains(body, "no finished application") {
		t.Errorf("other host: %d %q", code, body)
	}
	if code, _, _, _ := get(t, base+"/apps/wordcount2/", "spark.example.com", nil); code != 404 {
		t.Errorf("other prefix: %d", code)
	}

	// The next run binds the Service again: the redirect stops.
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, svc, types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/spec/selector","value":{"spark-app-selector":"`+appID+`","spark-role":"driver"}}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 10*time.Second, "the 404 after the rebind", func() (bool, string) {
		code, loc, _, err := get(t, base+"/apps/wordcount/jobs/", "spark.example.com", nil)
		return err == nil && code == 404, fmt.Sprint(code, loc, err)
	})
	if code := redirector.sigterm(t, 10*time.Second); code != verb.ExitOK {
		t.Errorf("redirector exit %d\n%s", code, redirector.out.String())
	}
	// One list, then watches (logged when they end): no request per redirect.
	testcluster.WaitFor(t, 10*time.Second, "the redirector's requests in the audit log", func() (bool, string) {
		got := auditCountsFor(t, ns, "sparkui-history-redirector")
		return got["list 200"] == 1 && got["list"] == 1 && got["get"] == 0 && got["watch"] >= 1, fmt.Sprint(got)
	})
}

// TestRedirectCommandLine: bad settings are usage errors (exit 2) naming the flag.
func TestRedirectCommandLine(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{redirectcmd.Command}, "--namespace (or $POD_NAMESPACE from the downward API) is required"},
		{[]string{"POD_NAMESPACE=ns"}, []string{redirectcmd.Command}, "--history-url (or $SPARKUI_HISTORY_URL) is required"},
		{[]string{"POD_NAMESPACE=ns", "SPARKUI_HISTORY_URL=javascript:alert(1)"}, []string{redirectcmd.Command}, `--history-url: "javascript:alert(1)" is not an absolute http or https URL`},
		{[]string{"POD_NAMESPACE=ns"}, []string{redirectcmd.Command, "--history-url=//evil.example"}, `--history-url: "//evil.example" is not an absolute http or https URL`},
		{[]string{"POD_NAMESPACE=ns", "SPARKUI_HISTORY_URL=https://shs"}, []string{redirectcmd.Command, "--max-connections=0"}, "--max-connections: 0 is not a positive number"},
		{[]string{"POD_NAMESPACE=ns"}, []string{redirectcmd.Command, "--redirector-port=0"}, "--redirector-port: 0 is not a port in 1-65535"},
		{[]string{"POD_NAMESPACE=ns"}, []string{redirectcmd.Command, "--health-port=8080"}, "--redirector-port and --health-port must differ"},
		{[]string{"POD_NAMESPACE=ns", "SPARKUI_REDIRECTOR_PORT=70000"}, []string{redirectcmd.Command}, "--redirector-port: 70000 is not a port"},
		{[]string{"POD_NAMESPACE=ns"}, []string{redirectcmd.Command, "extra"}, `unexpected argument "extra"`},
	} {
		cmd := exec.Command(binary, c.args...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, c.env...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != verb.ExitUsage || !strings.Contains(string(out), c.want) {
			t.Errorf("%v %v: exit %d (%v), output %q, want exit 2 and %q", c.env, c.args, code, err, out, c.want)
		}
	}
}

func annotation(t *testing.T, c *testcluster.Cluster, ns, svc, key string) string {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Annotations[key]
}
