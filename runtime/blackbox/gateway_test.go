package blackbox

// gateway_test.go: a user's link through a real Gateway API implementation. Traefik's
// Kubernetes Gateway provider (testkit/gatewaytest) programs an HTTPRoute backed by sparkui's
// UI Service; the built runtime binds and withdraws that Service as in a driver Pod, and the
// test opens the route's URL through Traefik at each stage.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/gatewaytest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// gatewayAgent is the User-Agent of the test's requests through the Gateway: the stand-in UI
// tells them apart from the runtime's own probes by it (Traefik passes it through).
const gatewayAgent = "sparkui-blackbox-gateway"

// routeConfig is the functionConfig's route: an HTTPRoute under /spark/{namespace}/{name}
// attached to the test's Gateway (named GATEWAY here).
const routeConfig = `    route:
      kind: HTTPRoute
      pathPrefix: /spark/{namespace}/{name}
      parentRefs:
      - name: GATEWAY
`

// TestGatewayRoutesToBoundUI: the route's URL, opened through Traefik, answers
//   - before the runtime binds: 500 with an empty body, the route Accepted but ResolvedRefs
//     False/BackendNotFound: the selector-less UI Service has no EndpointSlice, and Traefik
//     answers a backend it cannot load with a weighted service of status 500
//     (pkg/provider/kubernetes/gateway/httproute.go loadWRRService, kubernetes.go
//     getBackendAddresses "endpointslices not found"; pkg/server/service/service.go
//     getServiceHandler writes the status);
//   - once bound: the stand-in UI's own answer, GET /api/v1/applications listing exactly this
//     application, received by the UI at the rewritten path /api/v1/applications with
//     X-Forwarded-Context set to the prefix; a UI page's links carry the prefix;
//   - after the runtime's SIGTERM withdrawal: 503 "no available server" and nothing more
//     reaches the UI: the withdrawn selector leaves an EndpointSlice with no endpoint, which
//     Traefik loads as a load balancer without servers (pkg/server/service/loadbalancer/wrr,
//     errNoAvailableServer → 503).
func TestGatewayRoutesToBoundUI(t *testing.T) { gatewayRun(t, false) }

// TestGatewayRedirectsToHistoryAfterWithdrawal: as TestGatewayRoutesToBoundUI up to the
// withdrawal, rendered with historyServer and the namespace's redirector running
// (examples/history-redirector, its Pod under hostNetwork): the SIGTERM hands the Service to
// the redirector, and the SAME URL through Traefik then answers 302 to
// <historyURL>/history/<app id>/, the redirector answering from the Service the route names
// in X-Sparkui-Service (a client's own value for it is replaced by the route's).
func TestGatewayRedirectsToHistoryAfterWithdrawal(t *testing.T) { gatewayRun(t, true) }

func gatewayRun(t *testing.T, history bool) {
	c := testcluster.Shared(t, gatewaytest.ClusterOptions(t))
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	gw := gatewaytest.Start(t, c, ns)
	hostIP := gatewaytest.HostAddress(t)
	node := ns + "-node"
	addNode(t, c, node)
	prefix := "/spark/" + ns + "/wordcount-driver" // {name}: the carrier, here the driver Pod

	in := strings.NewReplacer("NS", ns, "APPID", appID).Replace(input)
	const anchor = "  spec:\n    sparkConf:"
	if strings.Count(in, anchor) != 1 {
		t.Fatal("the input changed: update the edit")
	}
	edit := "  spec:\n" + strings.ReplaceAll(routeConfig, "GATEWAY", gw.Name)
	var redirectPort int
	if history {
		// The redirector shares the machine's network with everything else here: a free port.
		redirectPort = freeLocalPort(t)
		edit += fmt.Sprintf("    historyServer:\n      url: %s\n      redirectorPort: %d\n", historyURL, redirectPort)
	}
	in = strings.Replace(in, anchor, edit+"    sparkConf:", 1)
	r := renderList(t, in)
	// A driver Pod's conf is not in the function's input: it reports the proxyBase to add
	// (SUI049), which the stand-in UI below is given, as a user following it would.
	if !strings.Contains(r.results, "[SUI049]") {
		t.Fatalf("no SUI049 for the Pod's proxyBase:\n%s", r.results)
	}
	svc := applySparkui(t, c, ns, r)
	routeDoc, uiSvc := renderedRoute(t, r, svc)
	if got := uiSvc.GetAnnotations()[names.AnnotationRoutePrefix]; got != prefix {
		t.Fatalf("the UI Service's %s = %q, want %q", names.AnnotationRoutePrefix, got, prefix)
	}
	kubectl(t, c.KubeconfigFile(t, c.Config), routeDoc, "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	url := gw.URL + prefix + "/api/v1/applications"

	// Before the bind.
	gw.WaitRoute(t, c, ns, svc, map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"})
	if b := waitAnswer(t, url, 500, ""); b != "" {
		t.Fatalf("before the bind Traefik answered 500 with %q, want an empty body", b)
	}

	var redirectorSlice []string
	if history {
		startRedirector(t, c, ns, node, hostIP, redirectPort)
		redirectorSlice = []string{fmt.Sprintf("%s:%d ready=true", hostIP, redirectPort)}
	}

	// The driver Pod runs under hostNetwork on this machine: the stand-in UI listens on every
	// address, as Spark's does (WebUI.bind: 0.0.0.0 unless SPARK_LOCAL_IP), so Traefik reaches
	// it at the Pod's IP, a non-loopback address of this machine.
	kubectl(t, c.KubeconfigFile(t, c.Config), podDoc(t, r), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	pod := podReady(t, c, ns, "wordcount-driver", hostIP)
	ui, err := fakespark.Start(fakespark.Options{Addr: "0.0.0.0:0", AppID: appID, PodName: pod.Name, Namespace: ns,
		State: fakespark.Ready, ProxyBase: prefix, ProxyRedirectURI: "/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ui.Close)
	d := driverRun{pod: pod, ip: hostIP}
	d.proc, d.sock, d.uiPort = startPodRuntime(t, c, pod, uiOptions{Server: ui})
	bound := svcState{selector: map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}, targetPort: strconv.Itoa(ui.Port)}
	testcluster.WaitFor(t, 30*time.Second, "the runtime's bind", func() (bool, string) {
		got := service(t, c, ns, svc)
		return got.String() == bound.String(), got.String() + "\n" + d.proc.logs()
	})
	waitEndpoints(t, c, ns, svc, d.slice())

	// Bound: through Traefik to the UI.
	gw.WaitRoute(t, c, ns, svc, map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"})
	body := waitAnswer(t, url, 200, "")
	var apps []struct {
		ID       string `json:"id"`
		Attempts []struct {
			Completed bool `json:"completed"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(body), &apps); err != nil {
		t.Fatalf("the answer through the Gateway is not the REST API's application list: %v\n%s", err, body)
	}
	if len(apps) != 1 || apps[0].ID != appID || len(apps[0].Attempts) != 1 || apps[0].Attempts[0].Completed {
		t.Fatalf("through the Gateway: %s, want exactly the running application %s", body, appID)
	}
	seen := ui.Requests(gatewayAgent) // the API requests only, so far
	if len(seen) == 0 {
		t.Fatal("the stand-in UI received none of the requests sent through the Gateway")
	}
	for _, rq := range seen {
		if rq.Path != "/api/v1/applications" || rq.Header.Get("X-Forwarded-Context") != prefix {
			t.Fatalf("the UI received path %q with X-Forwarded-Context %q, want %q and %q", rq.Path, rq.Header.Get("X-Forwarded-Context"), "/api/v1/applications", prefix)
		}
		if got := rq.Header.Values(names.HeaderUIService); len(got) != 1 || got[0] != svc {
			t.Fatalf("the UI received %s %q, want exactly %q (the route's header for the history redirector)", names.HeaderUIService, got, svc)
		}
	}
	// A browser's way in: Spark's redirect of its root and its pages' links keep the prefix
	// (spark.ui.proxyRedirectUri, UIUtils.uiRoot), so the next request goes through the route
	// again.
	if loc := waitRedirect(t, gw.URL+prefix+"/"); loc != prefix+"/jobs/" {
		t.Fatalf("the UI's root through the Gateway redirects to %q, want %q", loc, prefix+"/jobs/")
	}
	page := waitAnswer(t, gw.URL+prefix+"/jobs/", 200, "")
	if want := `href="` + prefix + `/stages/"`; !strings.Contains(page, want) {
		t.Fatalf("the Jobs page through the Gateway has no link %s:\n%s", want, page)
	}

	// The kubelet stops the runtime (no preStop hook run): SIGTERM withdraws.
	if code := sigterm(t, d); code != 0 {
		t.Fatalf("runtime exit code %d after SIGTERM, want 0\n%s", code, d.proc.logs())
	}
	if history {
		handedOff := svcState{selector: names.RedirectorSelector(), targetPort: strconv.Itoa(redirectPort)}
		if got := service(t, c, ns, svc); got.String() != handedOff.String() {
			t.Fatalf("after SIGTERM: %s, want %s\n%s", got, handedOff, d.proc.logs())
		}
		s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.Annotations[names.AnnotationHistoryURI], historyURL+"/history/"+appID+"/"; got != want {
			t.Fatalf("%s = %q after the hand-off, want %q", names.AnnotationHistoryURI, got, want)
		}
		waitEndpoints(t, c, ns, svc, redirectorSlice)
	} else {
		withdrawn := svcState{selector: map[string]string{names.WithdrawnSelectorKey: string(pod.UID)}, targetPort: strconv.Itoa(ui.Port)}
		if got := service(t, c, ns, svc); got.String() != withdrawn.String() {
			t.Fatalf("after SIGTERM: %s, want %s\n%s", got, withdrawn, d.proc.logs())
		}
		waitEndpoints(t, c, ns, svc, nil)
	}

	// Traefik follows the EndpointSlice within moments: until then the UI, still running,
	// answers. Once it answers the new way, nothing reaches the UI any more.
	check := func() {
		if !history {
			waitAnswer(t, url, 503, "no available server\n")
			return
		}
		loc := waitRedirect(t, url)
		if want := historyURL + "/history/" + appID + "/"; loc != want {
			t.Fatalf("after the hand-off the route redirects to %q, want %q", loc, want)
		}
	}
	check()
	if history {
		// A client's own X-Sparkui-Service naming another Service is replaced by the route's
		// ("set"): the redirect is still this application's.
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("User-Agent", gatewayAgent)
		req.Header.Set(names.HeaderUIService, "someone-else-ui-svc")
		client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := historyURL + "/history/" + appID + "/"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
			t.Fatalf("with a forged %s: %d %q, want 302 %q", names.HeaderUIService, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
	before := len(ui.Requests(gatewayAgent))
	for i := 0; i < 3; i++ {
		check()
	}
	if n := len(ui.Requests(gatewayAgent)); n != before {
		t.Fatalf("after the withdrawal %d more request(s) reached the UI through the Gateway", n-before)
	}
}

// startRedirector runs the namespace's History Server redirector as
// examples/history-redirector/redirector.yaml installs it: its ServiceAccount, Role and
// RoleBinding applied from the example, one Pod of its Deployment's template (under
// hostNetwork here, Ready once its /readyz answers, as the kubelet's readiness probe decides)
// and the built `sparkui-runtime redirect` run with the Pod's args and env, as its
// ServiceAccount, on port (and a free health port).
func startRedirector(t *testing.T, c *testcluster.Cluster, ns, node, hostIP string, port int) {
	t.Helper()
	docs, err := kio.FromBytes(mustRead(t, "../../examples/history-redirector/redirector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rbac []*yaml.RNode
	var tmpl corev1.PodTemplateSpec
	for _, d := range docs {
		switch d.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			rbac = append(rbac, d)
		case "Deployment":
			decode(t, d, &tmpl, "spec", "template")
		}
	}
	var buf strings.Builder
	if err := (kio.ByteWriter{Writer: &buf}).Write(rbac); err != nil {
		t.Fatal(err)
	}
	kubectl(t, c.KubeconfigFile(t, c.Config), []byte(buf.String()), "apply", "-n", ns, "--server-side", "--field-manager=pipeline", "-f", "-")
	if len(tmpl.Spec.Containers) != 1 {
		t.Fatalf("the redirector's template has %d containers, want 1", len(tmpl.Spec.Containers))
	}
	health := freeLocalPort(t)
	ctr := &tmpl.Spec.Containers[0]
	for i, a := range ctr.Args {
		switch {
		case strings.HasPrefix(a, "--redirector-port="):
			ctr.Args[i] = fmt.Sprintf("--redirector-port=%d", port)
		case strings.HasPrefix(a, "--health-port="):
			ctr.Args[i] = fmt.Sprintf("--health-port=%d", health)
		}
	}
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Name, pod.Namespace, pod.Spec.NodeName, pod.Spec.HostNetwork = "sparkui-history-redirector-0", ns, node, true
	created, err := c.Client.CoreV1().Pods(ns).Create(testcluster.Context(t, 10*time.Second), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the redirector's Pod: %v", err)
	}
	created.Status.PodIP, created.Status.HostIP = hostIP, hostIP // containerEnv reads them
	env := append(containerEnv(t, created, *ctr), "PATH="+os.Getenv("PATH"),
		"KUBECONFIG="+c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, created.Spec.ServiceAccountName)))
	p := &runtimeProc{cmd: exec.Command(runtimeBin, ctr.Args...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	testcluster.WaitFor(t, 30*time.Second, "the redirector's /readyz", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return false, err.Error() + "\n" + p.logs()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status + "\n" + p.logs()
	})
	podReady(t, c, ns, pod.Name, hostIP)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func freeLocalPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// renderedRoute is the HTTPRoute the function wrote for UI Service svc, as one YAML document,
// and that Service.
func renderedRoute(t *testing.T, r rendered, svc string) ([]byte, *yaml.RNode) {
	t.Helper()
	var route []byte
	var uiSvc *yaml.RNode
	for _, it := range r.items {
		switch {
		case it.GetKind() == "HTTPRoute" && it.GetName() == svc:
			route = []byte(it.MustString())
		case it.GetKind() == "Service" && it.GetName() == svc:
			uiSvc = it
		}
	}
	if route == nil || uiSvc == nil {
		t.Fatalf("the function wrote no HTTPRoute %s (or no UI Service):\n%s", svc, r.stream)
	}
	return route, uiSvc
}

// podDoc is the function's driver Pod out of its output, as one YAML document.
func podDoc(t *testing.T, r rendered) []byte {
	t.Helper()
	for _, it := range r.items {
		if it.GetKind() == "Pod" {
			return []byte(it.MustString())
		}
	}
	t.Fatal("the function emitted no Pod")
	return nil
}

// waitAnswer GETs url until it answers status, and body when body is not "", and returns the
// body. Traefik applies a configuration shortly after it writes the statuses, and the
// EndpointSlice it reads follows the Service: it fails after 30 s with the last answer.
func waitAnswer(t *testing.T, url string, status int, body string) string {
	t.Helper()
	got, _ := waitGet(t, url, fmt.Sprintf("%d %q", status, body), func(code int, b string) bool {
		return code == status && (body == "" || b == body)
	})
	return got
}

// waitRedirect GETs url until it answers 302 and returns the Location.
func waitRedirect(t *testing.T, url string) string {
	t.Helper()
	_, resp := waitGet(t, url, "302", func(code int, _ string) bool { return code == http.StatusFound })
	return resp.Header.Get("Location")
}

// waitGet GETs url (redirects not followed, as the test's User-Agent) until ok holds.
func waitGet(t *testing.T, url, want string, ok func(code int, body string) bool) (string, *http.Response) {
	t.Helper()
	return waitGetHost(t, url, "", want, ok)
}

// waitGetHost is waitGet with the request's Host set to host when not "": a route with
// hostnames matches on it.
func waitGetHost(t *testing.T, url, host, want string, ok func(code int, body string) bool) (string, *http.Response) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var body string
	var last *http.Response
	testcluster.WaitFor(t, 30*time.Second, "GET "+url+" to answer "+want, func() (bool, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", gatewayAgent)
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body, last = string(b), resp
		return ok(resp.StatusCode, body), fmt.Sprintf("%d %q Location %q", resp.StatusCode, body, resp.Header.Get("Location"))
	})
	return body, last
}
