package blackbox

// grpc_gateway_test.go: a Spark Connect client's call through a real Gateway API
// implementation. Traefik programs the GRPCRoute the function writes with `grpc: true`, backed
// by the UI Service's second port spark-connect; the built runtime binds and withdraws that
// Service, and the test calls a gRPC method through Traefik at each stage.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/gatewaytest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// connectMethod is the path of a Spark Connect RPC (service spark.connect.SparkConnectService,
// method Config: sql/connect/common/src/main/protobuf/spark/connect/base.proto); gRPC calls
// are POSTs to /<service>/<method>.
const connectMethod = "/spark.connect.SparkConnectService/Config"

// TestGatewayRoutesGRPCToBoundConnectServer: the function's GRPCRoute (grpc: true, its own
// grpcHostname) through Traefik to the UI Service's port spark-connect, whose targetPort is
// spark.connect.grpc.binding.port. An h2c call of connectMethod with :authority grpcHostname
// answers
//   - before the runtime binds: HTTP 200, application/json {"code":14,"message":"Service
//     Unavailable"} and no grpc-status, the GRPCRoute Accepted but ResolvedRefs
//     False/BackendNotFound: for a backend it cannot load Traefik's provider puts a weighted
//     service with GRPCStatus Unavailable "Service Unavailable"
//     (pkg/provider/kubernetes/gateway/grpcroute.go loadGRPCService/loadGRPCServers), which
//     pkg/server/service/service.go getServiceHandler writes as the JSON of the status proto
//     with status 200;
//   - once bound: the stand-in server's own answer (its message frame, trailer grpc-status 0),
//     the stand-in having received the call over HTTP/2 with that path and :authority
//     (Traefik dials a Service port without appProtocol as h2c, getGRPCServiceProtocol, and
//     passes the Host, ServersLoadBalancer.SetDefaults); the HTTPRoute on its own hostname
//     still reaches the UI;
//   - after the runtime's SIGTERM withdrawal: 503 "no available server" (the empty
//     EndpointSlice, a load balancer without servers: pkg/server/service/loadbalancer/wrr
//     errNoAvailableServer), and nothing more reaches the stand-in.
//
// Traefik takes GRPCRoutes on an HTTP listener (kubernetes.go supportedRouteKinds: HTTPRoute
// and GRPCRoute for HTTP and HTTPS) and serves HTTP/2 without TLS on it
// (server_entrypoint_tcp.go newHTTPServer, SetUnencryptedHTTP2 for the HTTP server).
func TestGatewayRoutesGRPCToBoundConnectServer(t *testing.T) {
	c := testcluster.Shared(t, gatewaytest.ClusterOptions(t))
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	gw := gatewaytest.Start(t, c, ns)
	hostIP := gatewaytest.HostAddress(t)
	addNode(t, c, ns+"-node")
	uiHost, grpcHost := "ui."+ns+".example.com", "connect."+ns+".example.com"

	// The stand-in listens first, so its port is the conf's: Spark Connect binds exactly
	// spark.connect.grpc.binding.port (maxRetries 0 by default).
	connect := startGRPCStandIn(t, hostIP)

	in := strings.NewReplacer("NS", ns, "APPID", appID).Replace(input)
	const anchor = "  spec:\n    sparkConf:\n"
	if strings.Count(in, anchor) != 1 {
		t.Fatal("the input changed: update the edit")
	}
	edit := fmt.Sprintf(`  spec:
    route:
      kind: HTTPRoute
      hostname: ui.{namespace}.example.com
      grpc: true
      grpcHostname: connect.{namespace}.example.com
      parentRefs:
      - name: %s
    sparkConf:
      spark.connect.grpc.binding.port: "%d"
`, gw.Name, connect.port)
	in = strings.Replace(in, anchor, edit, 1)
	// The driver runs Spark Connect's server (sbin/start-connect-server.sh), so the function
	// keeps the runtime off its gRPC port (--skip-ports): nothing but the Gateway's calls
	// reaches the stand-in.
	const ctr = "    - name: spark-kubernetes-driver\n      image: apache/spark:4.1.0\n"
	if strings.Count(in, ctr) != 1 {
		t.Fatal("the input's driver container changed: update the edit")
	}
	in = strings.Replace(in, ctr, ctr+"      command:\n      - /opt/spark/sbin/start-connect-server.sh\n", 1)
	r := renderList(t, in)
	skip := []int{7078, 7079, connect.port} // the driver's RPC and block manager ports, Connect's
	slices.Sort(skip)
	if want := fmt.Sprintf("--skip-ports=%d,%d,%d", skip[0], skip[1], skip[2]); !slices.Contains(r.args, want) {
		t.Fatalf("the runtime's args %v, want %s", r.args, want)
	}
	svc := applySparkui(t, c, ns, r)
	httpRoute, uiSvc := renderedRoute(t, r, svc)
	if got := uiSvc.GetAnnotations()[names.AnnotationRouteHost]; got != uiHost {
		t.Fatalf("the UI Service's %s = %q, want %q", names.AnnotationRouteHost, got, uiHost)
	}
	emittedPorts, err := uiSvc.Pipe(yaml.Lookup("spec", "ports"))
	if err != nil || emittedPorts == nil {
		t.Fatalf("the UI Service has no ports: %v", err)
	}
	wantPorts := fmt.Sprintf("- name: spark-ui\n  protocol: TCP\n  port: 4040\n- name: spark-connect\n  protocol: TCP\n  port: 15002\n  targetPort: %d\n", connect.port)
	if got := emittedPorts.MustString(); got != wantPorts {
		t.Fatalf("the UI Service's ports as emitted:\n%s\nwant:\n%s", got, wantPorts)
	}
	grpcRoute := emittedRoute(t, r, "GRPCRoute", svc)
	wantSpec := fmt.Sprintf(`parentRefs:
- group: gateway.networking.k8s.io
  kind: Gateway
  name: %s
hostnames:
- %s
rules:
- backendRefs:
  - group: ""
    kind: Service
    name: %s
    port: 15002
`, gw.Name, grpcHost, svc)
	if got := lookup(t, grpcRoute, "spec").MustString(); got != wantSpec {
		t.Fatalf("the function's GRPCRoute spec:\n%s\nwant:\n%s", got, wantSpec)
	}
	kubeconfig := c.KubeconfigFile(t, c.Config)
	kubectl(t, kubeconfig, httpRoute, "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	kubectl(t, kubeconfig, []byte(grpcRoute.MustString()), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	uiURL := gw.URL + "/api/v1/applications"

	// Before the bind.
	gw.WaitGRPCRoute(t, c, ns, svc, map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"})
	unavailable := `{"code":14,"message":"Service Unavailable"}`
	a := waitGRPC(t, gw.URL, grpcHost, "200 application/json "+unavailable, func(a grpcAnswer) bool {
		return a.status == http.StatusOK && a.contentType == "application/json" && string(a.body) == unavailable
	})
	if a.grpcStatus != "" {
		t.Fatalf("before the bind Traefik answered with grpc-status %q, want none", a.grpcStatus)
	}
	if n := len(connect.requests()); n != 0 {
		t.Fatalf("before the bind %d call(s) reached the stand-in", n)
	}

	kubectl(t, kubeconfig, podDoc(t, r), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	pod := podReady(t, c, ns, "wordcount-driver", hostIP)
	ui, err := fakespark.Start(fakespark.Options{Addr: "0.0.0.0:0", AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ui.Close)
	d := driverRun{pod: pod, ip: hostIP}
	d.proc, d.sock, d.uiPort = startPodRuntime(t, c, pod, uiOptions{Server: ui})
	bound := map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}
	testcluster.WaitFor(t, 30*time.Second, "the runtime's bind", func() (bool, string) {
		got := servicePorts(t, c, ns, svc)
		return got == portsState(bound, ui.Port, connect.port), got + "\n" + d.proc.logs()
	})
	both := []string{fmt.Sprintf("%s:%d ready=true", hostIP, d.uiPort), fmt.Sprintf("%s:%d ready=true", hostIP, connect.port)}
	sort.Strings(both)
	waitEndpoints(t, c, ns, svc, both)

	// Bound: the call reaches the stand-in through Traefik.
	gw.WaitGRPCRoute(t, c, ns, svc, map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"})
	a = waitGRPC(t, gw.URL, grpcHost, "200 application/grpc grpc-status 0", func(a grpcAnswer) bool {
		return a.status == http.StatusOK && a.contentType == "application/grpc" && a.grpcStatus == "0"
	})
	if !bytes.Equal(a.body, grpcFrame(standInReply)) {
		t.Fatalf("through the Gateway the call answered %q, want the stand-in's frame %q", a.body, grpcFrame(standInReply))
	}
	seen := connect.requests()
	if len(seen) == 0 {
		t.Fatal("the stand-in received none of the calls sent through the Gateway")
	}
	for _, rq := range seen {
		if want := (standInRequest{path: connectMethod, proto: "HTTP/2.0", authority: grpcHost, contentType: "application/grpc", framed: true}); rq != want {
			t.Fatalf("the stand-in received %+v, want %+v", rq, want)
		}
	}
	// The HTTPRoute on its own hostname, alongside.
	body, _ := waitGetHost(t, uiURL, uiHost, "200", func(code int, _ string) bool { return code == http.StatusOK })
	var apps []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &apps); err != nil || len(apps) != 1 || apps[0].ID != appID {
		t.Fatalf("the UI through the HTTPRoute: %s (%v), want exactly the application %s", body, err, appID)
	}

	// SIGTERM withdraws; the spark-connect port, not the runtime's, stays as declared.
	if code := sigterm(t, d); code != 0 {
		t.Fatalf("runtime exit code %d after SIGTERM, want 0\n%s", code, d.proc.logs())
	}
	withdrawn := map[string]string{names.WithdrawnSelectorKey: string(pod.UID)}
	if got, want := servicePorts(t, c, ns, svc), portsState(withdrawn, ui.Port, connect.port); got != want {
		t.Fatalf("after SIGTERM: %s, want %s\n%s", got, want, d.proc.logs())
	}
	waitEndpoints(t, c, ns, svc, nil)
	noServer := func() grpcAnswer {
		return waitGRPC(t, gw.URL, grpcHost, `503 "no available server\n"`, func(a grpcAnswer) bool {
			return a.status == http.StatusServiceUnavailable && string(a.body) == "no available server\n"
		})
	}
	noServer()
	before := len(connect.requests())
	for i := 0; i < 3; i++ {
		if a := noServer(); a.grpcStatus != "" {
			t.Fatalf("after the withdrawal Traefik answered with grpc-status %q, want none", a.grpcStatus)
		}
	}
	if n := len(connect.requests()); n != before {
		t.Fatalf("after the withdrawal %d more call(s) reached the stand-in", n-before)
	}
	waitAnswerHost(t, uiURL, uiHost, http.StatusServiceUnavailable, "no available server\n")
}

// emittedRoute is the function's route of kind named name.
func emittedRoute(t *testing.T, r rendered, kind, name string) *yaml.RNode {
	t.Helper()
	for _, it := range r.items {
		if it.GetKind() == kind && it.GetName() == name {
			return it
		}
	}
	t.Fatalf("the function wrote no %s %s:\n%s", kind, name, r.stream)
	return nil
}

// portsState describes a UI Service with both ports as this test expects it: the runtime's
// selector and UI targetPort on port 0, the declared spark-connect port untouched.
func portsState(selector map[string]string, uiPort, connectPort int) string {
	return fmt.Sprintf("selector %v, ports [spark-ui TCP 4040->%d <nil>] [spark-connect TCP 15002->%d <nil>]", selector, uiPort, connectPort)
}

// servicePorts is the live UI Service in portsState's form.
func servicePorts(t *testing.T, c *testcluster.Cluster, ns, name string) string {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("selector %v, ports", s.Spec.Selector)
	for _, p := range s.Spec.Ports {
		ap := "<nil>"
		if p.AppProtocol != nil {
			ap = *p.AppProtocol
		}
		out += fmt.Sprintf(" [%s %s %d->%s %s]", p.Name, p.Protocol, p.Port, p.TargetPort.String(), ap)
	}
	return out
}

// waitAnswerHost is waitAnswer with the request's Host set.
func waitAnswerHost(t *testing.T, url, host string, status int, body string) string {
	t.Helper()
	got, _ := waitGetHost(t, url, host, fmt.Sprintf("%d %q", status, body), func(code int, b string) bool {
		return code == status && (body == "" || b == body)
	})
	return got
}

// standInReply is the stand-in's reply message: opaque bytes in a gRPC frame.
var standInReply = []byte("sparkui-stand-in")

// grpcFrame is msg as gRPC's length-prefixed message: a compressed flag 0 and a 4-byte
// big-endian length (gRPC's PROTOCOL-HTTP2.md, Length-Prefixed-Message).
func grpcFrame(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// isFrame says whether b is exactly one uncompressed length-prefixed message.
func isFrame(b []byte) bool {
	return len(b) >= 5 && b[0] == 0 && int(binary.BigEndian.Uint32(b[1:5])) == len(b)-5
}

// standInRequest is what the stand-in recorded of one request.
type standInRequest struct {
	path, proto, authority, contentType string
	framed                              bool // the body was one length-prefixed message
}

// grpcStandIn is a gRPC-shaped stand-in for a Spark Connect server, NOT Spark Connect's
// protocol: over h2c it answers POST connectMethod with content-type application/grpc, one
// length-prefixed message (standInReply, not a protobuf message) and the trailer
// grpc-status 0, as a gRPC server answers a unary call (gRPC's PROTOCOL-HTTP2.md); anything
// else gets grpc-status 12 (UNIMPLEMENTED) in a trailers-only answer. It records every request.
type grpcStandIn struct {
	port int
	mu   sync.Mutex
	seen []standInRequest
}

func (s *grpcStandIn) requests() []standInRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]standInRequest(nil), s.seen...)
}

func (s *grpcStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, standInRequest{path: r.URL.Path, proto: r.Proto, authority: r.Host,
		contentType: r.Header.Get("Content-Type"), framed: isFrame(body)})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/grpc")
	if r.Method != http.MethodPost || r.URL.Path != connectMethod || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		w.Header().Set("Grpc-Status", "12")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Trailer", "Grpc-Status")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(grpcFrame(standInReply))
	w.Header().Set("Grpc-Status", "0")
}

// startGRPCStandIn serves a grpcStandIn on ip and a free port, as a hostNetwork driver's
// Connect server listens at the Pod's IP.
func startGRPCStandIn(t *testing.T, ip string) *grpcStandIn {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &grpcStandIn{port: ln.Addr().(*net.TCPAddr).Port}
	// HTTP/2 without TLS, with prior knowledge, as Traefik dials an h2c backend.
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: s, Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// grpcAnswer is Traefik's answer to one call.
type grpcAnswer struct {
	status      int
	contentType string
	body        []byte
	grpcStatus  string // from the trailers, or the headers of a trailers-only answer
}

// grpcCall POSTs one framed message to connectMethod at gwURL with :authority host, over
// HTTP/2 with prior knowledge on plain TCP (h2c), as a gRPC client on an insecure channel does.
func grpcCall(gwURL, host string) (grpcAnswer, error) {
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gwURL+connectMethod, bytes.NewReader(grpcFrame([]byte("request"))))
	if err != nil {
		return grpcAnswer{}, err
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("User-Agent", gatewayAgent)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return grpcAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return grpcAnswer{}, err
	}
	st := resp.Trailer.Get("Grpc-Status")
	if st == "" {
		st = resp.Header.Get("Grpc-Status")
	}
	return grpcAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: b, grpcStatus: st}, nil
}

// waitGRPC calls until ok holds (Traefik applies a configuration shortly after it writes the
// statuses); it fails after 30 s with the last answer.
func waitGRPC(t *testing.T, gwURL, host, want string, ok func(grpcAnswer) bool) grpcAnswer {
	t.Helper()
	var last grpcAnswer
	testcluster.WaitFor(t, 30*time.Second, "the call "+connectMethod+" on "+host+" to answer "+want, func() (bool, string) {
		a, err := grpcCall(gwURL, host)
		if err != nil {
			return false, err.Error()
		}
		last = a
		return ok(a), fmt.Sprintf("%d %s %q grpc-status %q", a.status, a.contentType, a.body, a.grpcStatus)
	})
	return last
}
