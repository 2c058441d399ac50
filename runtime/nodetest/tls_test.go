package nodetest

// tls_test.go: Spark UIs that serve HTTPS, on the real node. The stand-in binds as Spark's
// JettyUtils.startJettyServer does (an HTTPS connector on spark.ssl.ui.port, else
// userPort(spark.ui.port, 400), then spark.ui.port's plain connector that only redirects to
// it; cmd/fakespark-ui bind.go sslOptions is SSLOptions.parse), with a certificate it
// generates at start. What sparkui is told and what the UI does differ per case.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// tlsCase is one driver of TestTLSOnNode.
type tlsCase struct {
	name string
	// conf are the lines added to spark.properties (what spark-submit wrote from the user's
	// --conf, and what sparkui reads).
	conf []string
	// builderConf is what the application's own SparkSession.builder.config sets after the
	// JVM started ($FAKESPARK_BUILDER_CONF): in the conf the UI is built from (SparkContext
	// creates SparkEnv's SecurityManager, whose getSSLOptions("ui") SparkUI's Jetty server
	// uses) but in no file sparkui can read.
	builderConf string
	// tls is the --tls the function must write; bound whether the runtime must bind, and
	// reason what its reason must say otherwise.
	tls    bool
	bound  bool
	reason string
}

// The HTTPS port of every case: spark.ui.port 4045 and no spark.ssl.ui.port make it
// userPort(4045, 400) (SSLOptions.parse reads "$ns.port" with no fallback to spark.ssl.port;
// SparkUI/WebUI.bind → JettyUtils.startJettyServer: sslOptions.port.getOrElse(if (port > 0)
// Utils.userPort(port, 400) else 0), Spark 3.5 and 4.0).
const (
	tlsUIPort    = "4045"
	tlsHTTPSPort = "4445"
)

// tlsSettle is how long after its reason an unbound case must still be unbound: the runtime
// asks a socket again 1, 2, 4, 8 s after a TLS verdict (discover.Finder: backoff from 1 s), so
// three more probes; about what the bound case takes, so the three together cost no more.
const tlsSettle = 15 * time.Second

var tlsCases = []tlsCase{
	// TLS configured where sparkui reads it: spark.ssl.enabled (spark.ssl.ui.enabled inherits
	// it) with a keystore, and a spark.ssl.port that the UI's port must NOT follow.
	{name: "configured", tls: true, bound: true, conf: []string{
		"spark.ssl.enabled=true", "spark.ssl.port=9443",
		"spark.ssl.keyStore=/opt/spark/ssl/driver.p12", "spark.ssl.keyStoreType=PKCS12"}},
	// TLS turned on by the application itself, which sparkui cannot see: the plain connector
	// on 4045 only redirects to https://…:4445, the runtime (configured for plain HTTP) must
	// not bind it and must say why.
	{name: "unseen", tls: false, builderConf: "spark.ssl.enabled=true", reason: "redirects to https://"},
	// needClientAuth: sparkui configured for TLS, but the UI's handshake needs a client
	// certificate the runtime does not have (SSLOptions.createJettySslContextFactory:
	// setNeedClientAuth).
	{name: "clientauth", tls: true, conf: []string{"spark.ssl.ui.enabled=true", "spark.ssl.ui.needClientAuth=true",
		"spark.ssl.keyStore=/opt/spark/ssl/driver.p12"}, reason: "refuses the TLS handshake"},
}

// TestTLSOnNode: three spark-submit drivers with TLS on (tlsCases), on one node at once, each
// in its own namespace and on the Pod network: examples/spark-submit with spark.ui.port=4045
// (containerPort and driver Service port as spark-submit writes them for it), no hostNetwork,
// and, test-only, 100m CPU per driver so that three fit the node. Asserted:
//   - configured: the function writes --tls=true and a UI Service port named https; the
//     Service ends bound with targetPort 4445 (the HTTPS connector, not 4045's redirect nor
//     spark.ssl.port's 9443), its status annotations say bound on 4445, the EndpointSlice
//     names the Pod on 4445, and an HTTPS GET through the ClusterIP answers with this
//     application from the certificate the UI generated for its Pod;
//   - unseen and clientauth: the stand-in really serves HTTPS on 4445 (the redirect on 4045
//     answers 302 to it for unseen), the Service is never bound (no selector in any state a
//     watch saw, no endpoint, no status annotation claiming bound), and the runtime's log and
//     termination message give the TLS reason.
func TestTLSOnNode(t *testing.T) {
	n := startNodeWith(t, testnode.Options{Controllers: []string{"job-controller"}}, []testnode.Image{imageDefaultsImage(t)},
		"docker.io/apache/spark:3.5.3")
	base := example(t, "spark-submit/manifests.yaml")
	cfg := example(t, "spark-submit/fn-config.yaml")
	for _, edit := range []string{"spark.ui.port=0\n", "containerPort: 0\n", "port: 0\n", "targetPort: 0\n", "hostNetwork: true\n", "dnsPolicy: ClusterFirstWithHostNet\n"} {
		if !strings.Contains(base, edit) {
			t.Fatalf("examples/spark-submit changed (no %q): update the edits", edit)
		}
	}
	base = strings.NewReplacer("containerPort: 0\n", "containerPort: "+tlsUIPort+"\n", "  port: 0\n", "  port: "+tlsUIPort+"\n",
		"targetPort: 0\n", "targetPort: "+tlsUIPort+"\n", "  hostNetwork: true\n", "", "  dnsPolicy: ClusterFirstWithHostNet\n", "").Replace(base)
	// All three drivers start at once (the node's cost is their slowest, not their sum); each
	// case then waits for its own.
	var runs []*tlsDriver
	for _, tc := range tlsCases {
		runs = append(runs, tlsStart(t, n, cfg, base, tc))
	}
	runs = append(runs, imageDefaultsStart(t, n))
	for _, d := range runs {
		t.Run(d.tc.name, func(t *testing.T) { tlsCheck(t, n, d) })
	}
}

// tlsDriver is one case's driver, created.
type tlsDriver struct {
	tc                  tlsCase
	ns, pod, svc, appID string
	// job names the Job whose Pod is the driver (pod is then found once it exists).
	job string
	// uiPort is spark.ui.port (the redirect connector), httpsPort the HTTPS connector's.
	uiPort, httpsPort string
	tl                *timeline
	applied           time.Time
}

// tlsStart renders the case's input, checks what the function wrote, and creates it.
func tlsStart(t *testing.T, n *testnode.Node, cfg, base string, tc tlsCase) *tlsDriver {
	ns := "tls-" + tc.name
	props := "spark.ui.port=" + tlsUIPort + "\n"
	for _, l := range tc.conf {
		props += "\n    " + l + "\n"
	}
	in := strings.NewReplacer("spark.ui.port=0\n", props, "analytics", ns).Replace(base)
	objs := renderInput(t, cfg, in)
	var podName, svcName, appID, args string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, appID = o.GetName(), o.GetLabels()[names.LabelAppSelector]
			editDriver(t, o, func(ctr map[string]any, _ string) {
				ctr["resources"] = map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"memory": "64Mi"}}
				if tc.builderConf != "" {
					addEnv(ctr, "FAKESPARK_BUILDER_CONF", tc.builderConf)
				}
			})
			inits, _ := o.Object["spec"].(map[string]any)["initContainers"].([]any)
			for _, c := range inits {
				if m := c.(map[string]any); m["name"] == "sparkui-runtime" {
					args = fmt.Sprint(m["args"])
				}
			}
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
			ports, _ := o.Object["spec"].(map[string]any)["ports"].([]any)
			wantName := map[bool]string{true: "https", false: "spark-ui"}[tc.tls]
			if len(ports) == 0 || ports[0].(map[string]any)["name"] != wantName {
				t.Errorf("the UI Service's ports %v: want the first named %s", ports, wantName)
			}
		}
	}
	if podName == "" || svcName == "" {
		t.Fatal("no driver Pod or UI Service in the output")
	}
	if strings.Contains(args, "--tls=true") != tc.tls || tc.tls && !strings.Contains(args, "--ssl-ui-port="+tlsHTTPSPort) {
		t.Fatalf("the runtime's args %s: want --tls=%t (and --ssl-ui-port=%s with TLS)", args, tc.tls, tlsHTTPSPort)
	}
	n.PrepareNamespace(t, ns)
	tl := watchService(t, n, ns, svcName)
	applied := time.Now()
	create(t, n, objs)
	return &tlsDriver{tc: tc, ns: ns, pod: podName, svc: svcName, appID: appID, uiPort: tlsUIPort, httpsPort: tlsHTTPSPort, tl: tl, applied: applied}
}

// tlsCheck waits for the case's outcome.
func tlsCheck(t *testing.T, n *testnode.Node, d *tlsDriver) {
	ctx := testcluster.Context(t, 4*time.Minute)
	tc, ns, svcName, appID, tl, applied := d.tc, d.ns, d.svc, d.appID, d.tl, d.applied
	if d.job != "" {
		testcluster.WaitFor(t, 90*time.Second, "the Job's Pod", func() (bool, string) {
			l, err := n.Cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + d.job})
			if err != nil || len(l.Items) != 1 {
				return false, fmt.Sprint(l, err)
			}
			d.pod = l.Items[0].Name
			return true, ""
		})
	}
	podName := d.pod

	// The stand-in's own account of its connectors: HTTPS, then the redirect.
	m := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`https (\d+) redirect (\d+)`), 2*time.Minute)
	if m[1] != d.httpsPort || m[2] != d.uiPort {
		t.Fatalf("the UI serves HTTPS on %s and redirects on %s, want %s and %s", m[1], m[2], d.httpsPort, d.uiPort)
	}
	var pod *corev1.Pod
	testcluster.WaitFor(t, 60*time.Second, "the driver Pod's IP", func() (bool, string) {
		var err error
		pod, err = n.Cluster.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
		return err == nil && pod.Status.PodIP != "", fmt.Sprint(err)
	})
	if tc.bound {
		tlsBound(t, n, ctx, ns, svcName, appID, pod, tl, applied)
		return
	}
	tlsRefused(t, n, ctx, d, pod)
}

// tlsBound asserts the configured case: bound to the HTTPS connector, reachable over TLS.
func tlsBound(t *testing.T, n *testnode.Node, ctx context.Context, ns, svcName, appID string, pod *corev1.Pod, tl *timeline, applied time.Time) {
	testcluster.WaitFor(t, 90*time.Second, "the UI Service bound to the HTTPS port", func() (bool, string) {
		_, ok := tl.first(func(s svcState) bool { return s.TargetPort == tlsHTTPSPort && len(s.Selector) > 0 })
		return ok, tl.String()
	})
	bound, _ := tl.first(func(s svcState) bool { return s.TargetPort == tlsHTTPSPort && len(s.Selector) > 0 })
	t.Logf("apply → bound to HTTPS %s: %s", tlsHTTPSPort, bound.At.Sub(applied).Round(time.Millisecond))
	for _, s := range tl.snapshot() {
		if len(s.Selector) > 0 && s.TargetPort != tlsHTTPSPort {
			t.Errorf("the Service selected the driver on another port than HTTPS %s: %s", tlsHTTPSPort, s)
		}
	}
	want := pod.Status.PodIP + ":" + tlsHTTPSPort + " ready=true"
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the HTTPS port", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		return err == nil && len(eps) == 1 && eps[0] == want, fmt.Sprint(eps, err)
	})
	svc, err := n.Cluster.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := svc.Annotations; a[names.AnnotationUIState] != names.UIStateBound || a[names.AnnotationUIPort] != tlsHTTPSPort || a[names.AnnotationUIPod] != pod.Name {
		t.Errorf("status annotations %v: want %s on %s for %s", a, names.UIStateBound, tlsHTTPSPort, pod.Name)
	}
	// A client in the cluster: the ClusterIP and front port, kube-proxy's rules, the bound
	// targetPort; the UI's certificate is the one it made for its Pod (its hostname).
	front := fmt.Sprintf("https://%s:%d/api/v1/applications", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	testcluster.WaitFor(t, 30*time.Second, "the UI over HTTPS through the ClusterIP "+front, func() (bool, string) {
		code, body, err := httpsGet(n, front, pod.Name)
		return err == nil && code == 200 && strings.Contains(body, `"id":"`+appID+`"`), fmt.Sprint(code, " ", body, " ", err)
	})
	t.Logf("apply → answered over HTTPS through %s: %s", front, time.Since(applied).Round(time.Millisecond))
}

// tlsRefused asserts an unbound case: the reason reported, nothing bound.
func tlsRefused(t *testing.T, n *testnode.Node, ctx context.Context, d *tlsDriver, pod *corev1.Pod) {
	tc, ns, svcName, tl, applied := d.tc, d.ns, d.svc, d.tl, d.applied
	port := map[bool]string{true: d.httpsPort, false: d.uiPort}[tc.tls]
	// A line of the container's log as the kubelet writes it: "<RFC 3339 time> stdout F <line>".
	warn := regexp.MustCompile(`(?m)^(\S+) \S+ \S+ ([^\n]*TLS the runtime cannot verify; not bound: [^\n]*` + regexp.QuoteMeta(tc.reason) + `[^\n]*port=` + port + `)`)
	m := logLine(t, n, ns, pod.Name, "sparkui-runtime", warn, 90*time.Second)
	seen, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		t.Fatalf("the log line's time %q: %v", m[1], err)
	}
	t.Logf("apply → reason in the runtime's log %s: %s", seen.Sub(applied).Round(time.Millisecond), m[2])
	// The termination message, as the kubelet will report it: the file it mounted at the
	// sidecar's /dev/termination-log (<root-dir>/pods/<uid>/containers/<name>/<id>).
	files, _ := filepath.Glob(filepath.Join(n.Dir, "kubelet", "pods", string(pod.UID), "containers", "sparkui-runtime", "*"))
	msg := ""
	for _, f := range files {
		b, _ := os.ReadFile(f)
		msg += string(b)
	}
	if want := "port " + port + ": TLS the runtime cannot verify; not bound: "; !strings.Contains(msg, want) || !strings.Contains(msg, tc.reason) {
		t.Errorf("termination message %q (files %v): want %q … %q", msg, files, want, tc.reason)
	}
	if !tc.tls {
		// What the runtime saw on 4045: Jetty's redirect to the HTTPS connector.
		c := n.HTTPClient(3 * time.Second)
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Get("http://" + pod.Status.PodIP + ":" + d.uiPort + "/api/v1/applications")
		if err != nil {
			t.Fatalf("GET on the plain connector: %v", err)
		}
		resp.Body.Close()
		if loc := "https://" + pod.Status.PodIP + ":" + d.httpsPort + "/api/v1/applications"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != loc {
			t.Errorf("the plain connector answered %d Location %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), loc)
		}
	}
	// The runtime goes on probing (the UI may change): still unbound a while later.
	time.Sleep(time.Until(seen.Add(tlsSettle)))
	svc, err := n.Cluster.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Not bound, and nothing claims it is: no selector now or in any state the watch saw, no
	// endpoint, and the status annotations (when the runtime writes a waiting state) give the
	// TLS reason.
	if len(svc.Spec.Selector) != 0 {
		t.Errorf("bound with TLS the runtime cannot verify: selector %v", svc.Spec.Selector)
	}
	for _, s := range tl.snapshot() {
		if len(s.Selector) != 0 {
			t.Errorf("the Service was bound at one instant: %s", s)
		}
	}
	if eps, err := sliceEndpoints(ctx, n, ns, svcName); err != nil || len(eps) != 0 {
		t.Errorf("endpoints of the unbound Service: %v %v", eps, err)
	}
	a := svc.Annotations
	if st := a[names.AnnotationUIState]; st != "" && (st != names.UIStateWaiting || !strings.Contains(a[names.AnnotationUIReason], "TLS")) {
		t.Errorf("status annotations %v: want none, or %s with the TLS reason", a, names.UIStateWaiting)
	}
	if a[names.AnnotationUIState] == names.UIStateBound || a[names.AnnotationUIPort] != "" {
		t.Errorf("status annotations claim a bind: %v", a)
	}
}

// httpsGet GETs url through the node's network over TLS, accepting only a certificate naming
// host (the stand-in generates its own at start: no CA to trust beforehand).
func httpsGet(n *testnode.Node, url, host string) (int, string, error) {
	tr := &http.Transport{DialContext: n.DialContext, TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("no certificate")
			}
			return cs.PeerCertificates[0].VerifyHostname(host)
		},
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Timeout: 3 * time.Second, Transport: tr}).Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}
