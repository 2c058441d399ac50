package blackbox

// gateway_test.go: a user's link through a real Gateway API implementation. Traefik's
// Kubernetes Gateway provider (internal/gatewaytest) programs an HTTPRoute backed by sparkui's
// UI Service; the built runtime binds and withdraws that Service as in a driver Pod, and the
// test opens the route's URL through Traefik at each stage.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/internal/gatewaytest"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/testcluster"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// gatewayAgent is the User-Agent of the test's requests through the Gateway: the stand-in UI
// tells them apart from the runtime's own probes by it (Traefik passes it through).
const gatewayAgent = "sparkui-blackbox-gateway"

// httpRoute is the HTTPRoute as docs/routes.md (iface-15) says the function writes it for
// functionConfig route {kind: HTTPRoute, pathPrefix: "/spark/{namespace}/{name}", parentRefs:
// [the Gateway]}: named and labelled like the UI Service, a PathPrefix match on the expanded
// prefix, the prefix rewritten to "/" (Spark serves at its root) and X-Forwarded-Context set to
// the prefix (the header Spark's UIUtils.uiRoot reads for the links it writes), backed by the
// UI Service by port number.
const httpRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: SVC
  namespace: NS
  labels:
    app.kubernetes.io/managed-by: sparkui
    spark-app-selector: APPID
spec:
  parentRefs:
  - name: GATEWAY
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: PREFIX
    filters:
    - type: URLRewrite
      urlRewrite:
        path:
          type: ReplacePrefixMatch
          replacePrefixMatch: /
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set:
        - name: X-Forwarded-Context
          value: PREFIX
    backendRefs:
    - name: SVC
      port: 4040
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
//     X-Forwarded-Context set to the prefix;
//   - after the runtime's SIGTERM withdrawal: 503 "no available server" and nothing more
//     reaches the UI: the withdrawn selector leaves an EndpointSlice with no endpoint, which
//     Traefik loads as a load balancer without servers (pkg/server/service/loadbalancer/wrr,
//     errNoAvailableServer → 503).
func TestGatewayRoutesToBoundUI(t *testing.T) {
	c := testcluster.Shared(t, gatewaytest.ClusterOptions(t))
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	gw := gatewaytest.Start(t, c, ns)

	r := renderList(t, strings.NewReplacer("NS", ns, "APPID", appID).Replace(input))
	svc := applySparkui(t, c, ns, r)
	prefix := "/spark/" + ns + "/wordcount-driver"
	route := strings.NewReplacer("SVC", svc, "NS", ns, "APPID", appID, "GATEWAY", gw.Name, "PREFIX", prefix).Replace(httpRoute)
	kubectl(t, c.KubeconfigFile(t, c.Config), []byte(route), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	url := gw.URL + prefix + "/api/v1/applications"

	// Before the bind.
	gw.WaitRoute(t, c, ns, svc, map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"})
	if b := waitAnswer(t, url, 500, ""); b != "" {
		t.Fatalf("before the bind Traefik answered 500 with %q, want an empty body", b)
	}

	// The driver Pod runs under hostNetwork on this machine: the stand-in UI listens on every
	// address, as Spark's does (WebUI.bind: 0.0.0.0 unless SPARK_LOCAL_IP), so Traefik reaches
	// it at the Pod's IP, a non-loopback address of this machine.
	hostIP := gatewaytest.HostAddress(t)
	addNode(t, c, ns+"-node")
	kubectl(t, c.KubeconfigFile(t, c.Config), podDoc(t, r), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	pod := podReady(t, c, ns, "wordcount-driver", hostIP)
	ui, err := fakespark.Start(fakespark.Options{Addr: "0.0.0.0:0", AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
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
	seen := ui.Requests(gatewayAgent)
	if len(seen) == 0 {
		t.Fatal("the stand-in UI received none of the requests sent through the Gateway")
	}
	for _, rq := range seen {
		if rq.Path != "/api/v1/applications" || rq.Header.Get("X-Forwarded-Context") != prefix {
			t.Fatalf("the UI received path %q with X-Forwarded-Context %q, want %q and %q", rq.Path, rq.Header.Get("X-Forwarded-Context"), "/api/v1/applications", prefix)
		}
	}

	// The kubelet stops the runtime (no preStop hook run): SIGTERM withdraws.
	if code := sigterm(t, d); code != 0 {
		t.Fatalf("runtime exit code %d after SIGTERM, want 0\n%s", code, d.proc.logs())
	}
	withdrawn := svcState{selector: map[string]string{names.WithdrawnSelectorKey: string(pod.UID)}, targetPort: strconv.Itoa(ui.Port)}
	if got := service(t, c, ns, svc); got.String() != withdrawn.String() {
		t.Fatalf("after SIGTERM: %s, want %s\n%s", got, withdrawn, d.proc.logs())
	}
	waitEndpoints(t, c, ns, svc, nil)
	// Traefik follows the EndpointSlice within moments: until then the UI, still running,
	// answers. Once it answers 503, nothing reaches the UI any more.
	waitAnswer(t, url, 503, "no available server\n")
	before := len(ui.Requests(gatewayAgent))
	for i := 0; i < 3; i++ {
		waitAnswer(t, url, 503, "no available server\n")
	}
	if n := len(ui.Requests(gatewayAgent)); n != before {
		t.Fatalf("after the withdrawal %d more request(s) reached the UI through the Gateway", n-before)
	}
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

// waitGet GETs url (redirects not followed, as the test's User-Agent) until ok holds.
func waitGet(t *testing.T, url, want string, ok func(code int, body string) bool) (string, *http.Response) {
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
