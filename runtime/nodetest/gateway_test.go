package nodetest

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sparkui/sparkui/testkit/gatewaytest"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// redirectorImage is the image examples/history-redirector/redirector.yaml names: the node
// gets the runtime built from ./runtime under it, so the manifest runs unchanged.
const redirectorImage = "ghcr.io/sparkui/sparkui-runtime:contract-1.2"

// historyURL is the functionConfig's historyServer.url, and the redirector manifest's
// SPARKUI_HISTORY_URL as shipped (they must be equal).
const historyURL = "https://spark-history.example.com"

// TestGatewayToPodThenHistoryRedirect: the user's path end to end on a real node. Traefik's
// Kubernetes Gateway provider (testkit/gatewaytest, `make traefik`) runs on the node's
// network and programs the HTTPRoute the function wrote for examples/spark-submit (rendered
// with route kind HTTPRoute under /spark/{namespace}/{name} and historyServer.url); the
// namespace's redirector is examples/history-redirector/redirector.yaml applied as shipped
// (a Deployment of two real Pods through the deployment and replicaset controllers). The
// request goes client → Traefik → the HTTPRoute → the UI Service's EndpointSlice → the real
// driver Pod (hostNetwork) → the stand-in UI. Asserted, on one URL:
//   - while the run is live: 200 from the UI through the route: /api/v1/applications lists
//     exactly this application (the route's URLRewrite strips the prefix), and a UI page's links
//     carry the prefix (spark.ui.proxyBase, which the function wrote into spark.properties);
//   - the run ends normally (the driver stops its UI and exits 0): the runtime, seeing the UI's
//     socket gone, hands the Service off — selector the redirector's, targetPort 8080,
//     sparkui.dev/history-uri = <url>/history/<app id>/, the EndpointSlice the two redirector
//     Pods — and the SAME URL through Traefik answers 302 to <url>/history/<app id>/ with
//     Cache-Control: no-store;
//   - the Service never routed to anything but the live UI, nothing, or the redirector;
//   - `delete pod` of the finished driver: the Service goes with it (a spark-submit UI Service
//     is owned by its Pod).
func TestGatewayToPodThenHistoryRedirect(t *testing.T) {
	n := startNodeWith(t, testnode.Options{
		Controllers:       []string{"deployment-controller", "replicaset-controller"},
		CRDDirectoryPaths: []string{gatewaytest.CRDDir(t)},
	}, []testnode.Image{{Ref: redirectorImage, Name: "sparkui-runtime", Binary: mustBuild(t, "./runtime")}},
		"docker.io/apache/spark:3.5.3")
	c := n.Cluster
	const ns = "analytics"
	n.PrepareNamespace(t, ns)
	ctx := testcluster.Context(t, 5*time.Minute)

	// The namespace's redirector, as shipped.
	var redirector []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(example(t, "history-redirector/redirector.yaml"), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(doc, "")) == "" {
			continue
		}
		o, err := testcluster.DecodeYAML([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		o.SetNamespace(ns)
		redirector = append(redirector, o)
	}
	var replicas int32
	for _, o := range redirector {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			replicas = *d.Spec.Replicas
			env := d.Spec.Template.Spec.Containers[0].Env
			for _, e := range env {
				if e.Name == "SPARKUI_HISTORY_URL" && e.Value != historyURL {
					t.Fatalf("redirector.yaml's SPARKUI_HISTORY_URL is %q, the test's historyServer.url %q: update the test", e.Value, historyURL)
				}
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != redirectorImage {
				t.Fatalf("redirector.yaml runs %s, the node has the runtime as %s: update the test", img, redirectorImage)
			}
		}
	}
	create(t, n, redirector)
	var redirectorSlice []string
	testcluster.WaitFor(t, 2*time.Minute, "the redirector's Pods Ready", func() (bool, string) {
		d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, "sparkui-history-redirector", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if d.Status.ReadyReplicas != replicas {
			return false, fmt.Sprintf("%d/%d Ready", d.Status.ReadyReplicas, replicas)
		}
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "sparkui.dev/history-redirector=true"})
		if err != nil {
			return false, err.Error()
		}
		redirectorSlice = nil
		for _, p := range pods.Items {
			redirectorSlice = append(redirectorSlice, p.Status.PodIP+":8080")
		}
		return len(redirectorSlice) == int(replicas), fmt.Sprint(redirectorSlice)
	})

	// Traefik on the node's network, where Pod IPs are; its API server is the node's forwarder.
	kc, err := n.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewaytest.StartWith(t, c, ns, gatewaytest.Options{Host: n.Gateway.String(), Command: n.Command, Kubeconfig: kc})

	cfg := example(t, "spark-submit/fn-config.yaml")
	const anchor = "  sparkConf: {}\n"
	if strings.Count(cfg, anchor) != 1 {
		t.Fatal("examples/spark-submit/fn-config.yaml changed: update the edit")
	}
	cfg = strings.Replace(cfg, anchor, fmt.Sprintf(`  route:
    kind: HTTPRoute
    pathPrefix: /spark/{namespace}/{name}
    parentRefs:
    - name: %s
  historyServer:
    url: %s
`, gw.Name, historyURL)+anchor, 1)
	objs := renderInput(t, cfg, example(t, "spark-submit/manifests.yaml"))
	var podName, svcName, appID string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			podName, appID = o.GetName(), o.GetLabels()["spark-app-selector"]
			editDriver(t, o, func(ctr map[string]any, dir string) {
				addEnv(ctr, "FAKESPARK_END_FILE", dir+"/end-of-run")
			})
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	prefix := "/spark/" + ns + "/" + podName
	url := gw.URL + prefix + "/api/v1/applications"
	tl := watchService(t, n, ns, svcName)
	slices := sampleSlices(t, n, ns, svcName)
	create(t, n, objs)

	uiPort := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`listening (\d+) app`), 2*time.Minute)[1]
	node := n.Gateway.String()
	testcluster.WaitFor(t, 90*time.Second, "bound, the EndpointSlice on the UI", func() (bool, string) {
		_, ok := slices.first(time.Time{}, func(eps []string) bool { return len(eps) == 1 && eps[0] == node+":"+uiPort+" ready=true" })
		return ok, tl.String() + slices.String()
	})
	gw.WaitRoute(t, c, ns, svcName, map[string]string{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"})

	client := n.HTTPClient(5 * time.Second)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	fetch := func(u string) (int, http.Header, string, error) {
		resp, err := client.Get(u)
		if err != nil {
			return 0, nil, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b), nil
	}
	testcluster.WaitFor(t, 60*time.Second, "the live UI through Traefik at "+url, func() (bool, string) {
		code, _, body, err := fetch(url)
		if err != nil {
			return false, err.Error()
		}
		return code == 200 && strings.Contains(body, `"id":"`+appID+`"`) && strings.Count(body, `"id":`) == 1, fmt.Sprintf("%d %s", code, body)
	})
	code, _, page, err := fetch(gw.URL + prefix + "/jobs/")
	if err != nil || code != 200 || !strings.Contains(page, `href="`+prefix+`/stages/"`) {
		t.Errorf("a UI page through Traefik: %d %v, want its links under %s:\n%s", code, err, prefix, page)
	}

	// The run ends: the driver stops its UI and exits 0.
	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	endFile := filepath.Join(n.Dir, "kubelet", "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", "spark-local-dir-1", "end-of-run")
	if err := writeFile(endFile); err != nil {
		t.Fatalf("ending the run: %v", err)
	}
	ended := time.Now()
	handedOff := map[string]string{"sparkui.dev/history-redirector": "true"}
	var h svcState
	testcluster.WaitFor(t, 60*time.Second, "handed off to the redirector", func() (bool, string) {
		var ok bool
		h, ok = tl.first(func(s svcState) bool { return equal(s.Selector, handedOff) && s.TargetPort == "8080" })
		return ok, tl.String()
	})
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := historyURL + "/history/" + appID + "/"
	if got := svc.Annotations["sparkui.dev/history-uri"]; got != want {
		t.Errorf("sparkui.dev/history-uri = %q, want %q", got, want)
	}
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the redirector's Pods", func() (bool, string) {
		_, ok := slices.first(h.At, func(eps []string) bool { return sameSet(eps, redirectorSlice, " ready=true") })
		return ok, slices.String()
	})
	var redirected time.Time
	var between []string // what the URL answered until Traefik followed the hand-off
	testcluster.WaitFor(t, 60*time.Second, "the same URL redirecting to the History Server", func() (bool, string) {
		code, hdr, body, err := fetch(url)
		if err != nil {
			return false, err.Error()
		}
		if code == 200 && strings.Contains(body, appID) {
			t.Fatalf("the URL answered from the application's UI after its run ended: %s", body)
		}
		if code != http.StatusFound {
			if a := fmt.Sprintf("%d %q", code, strings.TrimSpace(body)); len(between) == 0 || between[len(between)-1] != a {
				between = append(between, a)
			}
		}
		redirected = time.Now()
		return code == http.StatusFound && hdr.Get("Location") == want && hdr.Get("Cache-Control") == "no-store",
			fmt.Sprintf("%d Location=%q Cache-Control=%q %s", code, hdr.Get("Location"), hdr.Get("Cache-Control"), body)
	})
	t.Logf("run ended → handed off %s, → the URL redirects %s; in between it answered %v", h.At.Sub(ended).Round(time.Millisecond), redirected.Sub(ended).Round(time.Millisecond), between)
	testcluster.WaitFor(t, 60*time.Second, "the driver Pod Succeeded", func() (bool, string) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == "Succeeded", podWhy(p)
	})

	// Every state: not bound, the live UI, withdrawn, handed off to the redirector.
	for _, s := range tl.snapshot() {
		if !(s.Gone || len(s.Selector) == 0 || isWithdrawn(s) || s.TargetPort == uiPort || (equal(s.Selector, handedOff) && s.TargetPort == "8080")) {
			t.Errorf("the Service routed elsewhere: %s; timeline:%s", s, tl)
		}
	}
	for _, s := range slices.snapshot() {
		if !(len(s.Eps) == 0 || only(s.Eps, node+":"+uiPort) || subset(s.Eps, redirectorSlice)) {
			t.Errorf("the EndpointSlice listed %v; samples:%s", s.Eps, slices)
		}
	}

	// The finished driver deleted: its UI Service goes with it.
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 90*time.Second, "the UI Service collected with the Pod", func() (bool, string) {
		_, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), tl.String()
	})
	t.Logf("Service timeline:%s\nEndpointSlice samples:%s", tl, slices)
}

// sameSet reports whether eps ("ip:port ready=…") are exactly addrs ("ip:port") with suffix.
func sameSet(eps, addrs []string, suffix string) bool {
	if len(eps) != len(addrs) {
		return false
	}
	want := map[string]bool{}
	for _, a := range addrs {
		want[a+suffix] = true
	}
	for _, e := range eps {
		if !want[e] {
			return false
		}
		delete(want, e)
	}
	return true
}

// subset reports whether every endpoint of eps is one of addrs, whatever its readiness.
func subset(eps, addrs []string) bool {
	for _, e := range eps {
		addr, _, _ := strings.Cut(e, " ")
		found := false
		for _, a := range addrs {
			found = found || a == addr
		}
		if !found {
			return false
		}
	}
	return true
}
