package blackbox

// history_test.go: the History Server hand-off end to end with the built binaries: the
// function renders a carrier with historyServer set, the runtime (as the kubelet runs it, in
// a Pod network, the stand-in UI under spark.ui.proxyBase) binds, and its withdrawal hands the
// Service to the namespace's redirector Pod.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

const (
	historyURL     = "https://spark-history.example.com"
	redirectorPort = 8090
)

// TestHistoryHandoffUnderProxyBase: a ScheduledSparkApplication rendered with historyServer;
// each run's UI serves under spark.ui.proxyBase (links prefixed, REST API at the root, as
// Spark does) and the runtime finds, verifies and binds it. Run 1's SIGTERM hands the Service
// off: selector = the redirector's, targetPort = the redirector port, sparkui.dev/history-uri
// = <url>/history/<run 1's app id>/, EndpointSlice = the redirector Pod, not the driver.
// Run 2 binds it back (EndpointSlice = run 2's driver); run 3 takes it over while run 2 runs,
// and run 2's late preStop withdrawal leaves it on run 3; run 3's SIGTERM hands it off with
// its own id.
func TestHistoryHandoffUnderProxyBase(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	edit := func(t *testing.T, in string) string {
		const anchor = "    kubeflow:\n      injection: template\n"
		if strings.Count(in, anchor) != 1 {
			t.Fatal("the kubeflow scheduled input changed: update the edit")
		}
		return strings.Replace(in, anchor, anchor+fmt.Sprintf("    historyServer:\n      url: %s\n      redirectorPort: %d\n", historyURL, redirectorPort), 1)
	}
	r, carrier := renderCarrier(t, "carrier-kubeflow-scheduled", ns, edit, false)
	if !strings.Contains(string(r.stream), "SPARKUI_HISTORY_URL") {
		t.Fatalf("the rendered sidecar has no history env:\n%s", r.stream)
	}
	app := carrier.GetName()
	proxyBase := "/apps/" + app
	svc := applySparkui(t, c, ns, r)
	node := ns + "-node"
	addNode(t, c, node)

	// The namespace's redirector (examples/history-redirector): a Ready Pod with its label.
	ctx := testcluster.Context(t, 30*time.Second)
	redirector := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkui-history-redirector-0", Namespace: ns,
			Labels: map[string]string{names.LabelHistoryRedirector: names.HistoryRedirectorValue, "app.kubernetes.io/name": "sparkui-history-redirector"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "redirector", Image: "ghcr.io/sparkui/sparkui-runtime:test",
			Args: []string{"redirect", fmt.Sprintf("--redirector-port=%d", redirectorPort)}}}},
	}
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, redirector, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	redirectorIP := fmt.Sprintf("10.244.%d.200", len(ns)%200)
	podReady(t, c, ns, redirector.Name, redirectorIP)
	redirectorSlice := []string{fmt.Sprintf("%s:%d ready=true", redirectorIP, redirectorPort)}

	build := kubeflowDriver(false, true)
	type run struct {
		driverRun
		appID string
	}
	start := func(n int) run {
		pod, ui := build(t, carrier, n)
		ui.ProxyBase = proxyBase
		pod.Namespace, pod.Spec.NodeName = ns, node
		created := createBuiltPod(t, c, ns, pod, n)
		ip := fmt.Sprintf("10.244.%d.%d", len(ns)%200, 10+n)
		d := driverRun{pod: podReady(t, c, ns, created.Name, ip), ip: ip}
		d.sel = map[string]string{names.LabelAppSelector: d.pod.Labels[names.LabelAppSelector], labelAppID: app, names.LabelSparkRole: names.RoleDriver}
		d.proc, d.sock, d.uiPort = startPodRuntime(t, c, d.pod, ui)
		want := svcState{selector: d.sel, targetPort: strconv.Itoa(d.uiPort)}
		testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("run %d's bind under proxyBase", n), func() (bool, string) {
			got := service(t, c, ns, svc)
			return got.String() == want.String(), got.String() + "\n" + d.proc.logs()
		})
		waitEndpoints(t, c, ns, svc, d.slice())
		return run{d, ui.AppID}
	}
	handedOff := func(r run) {
		t.Helper()
		s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := svcState{selector: map[string]string{names.LabelHistoryRedirector: "true"}, targetPort: strconv.Itoa(redirectorPort)}
		if got := (svcState{selector: s.Spec.Selector, targetPort: s.Spec.Ports[0].TargetPort.String()}); got.String() != want.String() {
			t.Fatalf("after %s's withdrawal: %s, want %s\n%s", r.pod.Name, got, want, r.proc.logs())
		}
		if got, want := s.Annotations[names.AnnotationHistoryURI], historyURL+"/history/"+r.appID+"/"; got != want {
			t.Errorf("%s = %q, want %q", names.AnnotationHistoryURI, got, want)
		}
		if _, ok := s.Annotations[names.AnnotationResolvedExternalURI]; ok {
			t.Errorf("resolved external URI left on a handed-off Service: %v", s.Annotations)
		}
		waitEndpoints(t, c, ns, svc, redirectorSlice)
	}

	first := start(1)
	if code := sigterm(t, first.driverRun); code != 0 {
		t.Errorf("run 1: exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
	}
	handedOff(first)
	deletePod(t, c, first.pod)
	holdEndpoints(t, c, ns, svc, redirectorSlice, time.Second)

	second := start(2) // binds the handed-off Service back: EndpointSlice = run 2's driver
	third := start(3)  // takes it over while run 2 still runs
	holdEndpoints(t, c, ns, svc, third.slice(), time.Second)
	preStop(t, second.driverRun) // run 2's late withdrawal
	if got, want := service(t, c, ns, svc), (svcState{selector: third.sel, targetPort: strconv.Itoa(third.uiPort)}); got.String() != want.String() {
		t.Fatalf("run 2's late withdrawal changed run 3's bind: %s, want %s\n%s", got, want, second.proc.logs())
	}
	if !strings.Contains(second.proc.logs(), "this Pod does not hold the binding") {
		t.Errorf("run 2 did not say the binding was not its own:\n%s", second.proc.logs())
	}
	holdEndpoints(t, c, ns, svc, third.slice(), 2*time.Second)
	if code := sigterm(t, second.driverRun); code != 0 {
		t.Errorf("run 2: exit code %d after SIGTERM, want 0", code)
	}
	deletePod(t, c, second.pod)
	if code := sigterm(t, third.driverRun); code != 0 {
		t.Errorf("run 3: exit code %d after SIGTERM, want 0\n%s", code, third.proc.logs())
	}
	handedOff(third)
	deletePod(t, c, third.pod)
	serviceOutlives(t, c, ns, svc)
	holdEndpoints(t, c, ns, svc, redirectorSlice, time.Second)
}
