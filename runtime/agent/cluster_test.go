package agent_test

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// The package's tests share one control plane with kube-controller-manager (EndpointSlices,
// garbage collection) and an audit log of every request on Services.
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
  - group: "events.k8s.io"
    resources: ["events"]
- level: None
`

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sparkui-runtime-audit-")
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
	clusterOpts = testcluster.Options{
		ControllerManager: true,
		APIServerArgs: map[string][]string{
			"audit-policy-file": {policy},
			"audit-log-path":    {auditLog},
			"audit-log-mode":    {"blocking"},
		},
	}
	code := testcluster.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

const sa = "spark"

// app is one application's objects in the cluster and the runtime's identity.
type app struct {
	c       *testcluster.Cluster
	ns      string
	appID   string
	service string
	pod     *corev1.Pod
	podIP   string
	user    *rest.Config
	tls     bool
	svcType corev1.ServiceType
	svcAnn  map[string]string
}

type appOpts struct {
	noService bool
	noRBAC    bool
	tls       bool
	svcAppID  string // spark-app-selector label of the Service; default the app's
	svcType   corev1.ServiceType
	svcAnn    map[string]string // annotations of the Service; default the one sparkui-fn writes (Flux's ssa: IfNotPresent)
	noAnn     bool              // a Service without metadata.annotations (not written by sparkui-fn)
	podName   string            // the driver Pod's name; default wordcount-driver
}

var ipSeq struct {
	sync.Mutex
	n int
}

func nextIP() string {
	ipSeq.Lock()
	defer ipSeq.Unlock()
	ipSeq.n++
	return fmt.Sprintf("10.244.%d.%d", 1+ipSeq.n/250, 1+ipSeq.n%250)
}

func newApp(t testing.TB, c *testcluster.Cluster, o appOpts) *app {
	t.Helper()
	ctx := testcluster.Context(t, 30*time.Second)
	ns := c.UniqueNamespace(t)
	if o.svcAnn == nil && !o.noAnn {
		o.svcAnn = map[string]string{names.AnnotationFluxSSA: names.FluxSSAIfNotPresent}
	}
	a := &app{c: c, ns: ns, appID: "spark-" + ns, service: "wordcount-ui-svc", podIP: nextIP(), tls: o.tls, svcType: o.svcType, svcAnn: o.svcAnn}

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.pod = a.addPod(t, cmp.Or(o.podName, "wordcount-driver"), a.podIP)
	if !o.noService {
		a.createService(t, o.svcAppID)
	}
	if !o.noRBAC {
		a.createRBAC(t)
	}
	a.user = saConfig(t, c, ns)
	return a
}

// addPod creates a driver Pod of the application on the app's Node, with IP ip, Running and
// Ready (through the status subresource).
func (a *app) addPod(t testing.TB, name, ip string) *corev1.Pod {
	t.Helper()
	return a.addPodLabels(t, name, ip, map[string]string{
		names.LabelAppSelector: a.appID, names.LabelSparkRole: names.RoleDriver, "spark-app-name": "wordcount",
	})
}

// addPodLabels is addPod with the Pod's labels given.
func (a *app) addPodLabels(t testing.TB, name, ip string, labels map[string]string) *corev1.Pod {
	t.Helper()
	ctx := testcluster.Context(t, 30*time.Second)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.ns, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:           a.ns + "-node",
			ServiceAccountName: sa,
			Containers: []corev1.Container{{
				Name: names.DriverContainer, Image: "apache/spark:4.0.0",
				Ports: []corev1.ContainerPort{{Name: "driver-rpc-port", ContainerPort: 7078}},
			}},
		},
	}
	pod, err := a.c.Client.CoreV1().Pods(a.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "192.0.2.10",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	if pod, err = a.c.Client.CoreV1().Pods(a.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

func saConfig(t testing.TB, c *testcluster.Cluster, ns string) *rest.Config {
	return c.ServiceAccountConfig(t, ns, sa) // serialised by the harness
}

// me is how the app's runtime names itself in its probes' User-Agent.
func (a *app) me() string { return "(driver Pod " + a.ns + "/" + a.pod.Name + ")" }

func (a *app) portName() string {
	if a.tls {
		return names.UIPortNameTLS
	}
	return names.UIPortName
}

// createService creates the UI Service as sparkui-fn emits it: no selector, one port.
func (a *app) createService(t testing.TB, appID string) {
	t.Helper()
	if appID == "" {
		appID = a.appID
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: a.service, Namespace: a.ns, Labels: map[string]string{
			names.LabelManagedBy: names.ManagedByValue, names.LabelAppSelector: appID,
		}, Annotations: a.svcAnn},
		Spec: corev1.ServiceSpec{
			Type: cmp.Or(a.svcType, corev1.ServiceTypeClusterIP),
			// No targetPort: the function declares no field the runtime writes (docs/gitops.md);
			// the API server defaults it to the port.
			Ports: []corev1.ServicePort{{Name: a.portName(), Protocol: corev1.ProtocolTCP, Port: 4040}},
		},
	}
	if _, err := a.c.Client.CoreV1().Services(a.ns).Create(testcluster.Context(t, 30*time.Second), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createRBAC creates the Role and RoleBinding sparkui-fn emits.
func (a *app) createRBAC(t testing.TB) {
	t.Helper()
	ctx := testcluster.Context(t, 30*time.Second)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: sidecar.DefaultRole(a.service), Namespace: a.ns},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{a.service},
			Verbs: sidecar.RuntimeVerbs,
		}},
	}
	if _, err := a.c.Client.RbacV1().Roles(a.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: a.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: a.ns}},
	}
	if _, err := a.c.Client.RbacV1().RoleBindings(a.ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authorizer sees RBAC objects through an informer: wait until it allows the patch.
	testcluster.WaitFor(t, 20*time.Second, "RBAC to take effect", func() (bool, string) {
		res, err := a.c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sarFor(a), metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return res.Status.Allowed, res.Status.Reason
	})
}

// config is the runtime's configuration for the app. HostNetwork is on: the tests' stand-in
// UIs (and those of the tests running beside them) share the test process's network
// namespace, as drivers share a node's under hostNetwork, so identity must be proven. Tests of
// the Pod network use podNetwork, which restricts the candidates to their own UI's port.
func (a *app) config(t testing.TB) agent.Config {
	dir := t.TempDir()
	return agent.Config{
		Config: sidecar.Config{
			Service: a.service, AppID: a.appID, UIPort: 0, MaxRetries: 16, TLS: a.tls, HostNetwork: true,
		},
		PodName: a.pod.Name, PodNamespace: a.ns, PodUID: string(a.pod.UID),
		Socket:         filepath.Join(dir, "runtime.sock"),
		StateFile:      filepath.Join(dir, "bound-port"),
		TerminationLog: filepath.Join(dir, "termination-log"),
	}
}

// podNetwork makes cfg the Pod network's, its candidates the one port the test's own UI
// listens on (spark.ui.port = port, no retries): every other socket of the test process
// belongs to other tests, which on a real Pod network would not be there.
func podNetwork(cfg agent.Config, port int) agent.Config {
	cfg.HostNetwork, cfg.UIPort, cfg.MaxRetries = false, port, 0
	return cfg
}

// service reads the UI Service as an administrator.
func (a *app) service_(t testing.TB) *corev1.Service {
	t.Helper()
	svc, err := a.c.Client.CoreV1().Services(a.ns).Get(testcluster.Context(t, 10*time.Second), a.service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// sliceEndpoints lists "ip:port" of the ready endpoints in the Service's EndpointSlices
// managed by the EndpointSlice controller, and the count of all endpoints.
func sliceEndpoints(ctx context.Context, a *app) (ready []string, total int, err error) {
	list, err := a.c.Client.DiscoveryV1().EndpointSlices(a.ns).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + a.service,
	})
	if err != nil {
		return nil, 0, err
	}
	for _, s := range list.Items {
		total += len(s.Endpoints)
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, addr := range ep.Addresses {
				for _, p := range s.Ports {
					if p.Port != nil {
						ready = append(ready, fmt.Sprintf("%s:%d", addr, *p.Port))
					}
				}
			}
		}
	}
	sort.Strings(ready)
	return ready, total, nil
}

func (a *app) waitSlice(t testing.TB, port int) {
	t.Helper()
	a.waitSliceIP(t, a.podIP, port)
}

// waitSliceIP waits until the Service's slices hold exactly one endpoint, ip:port.
func (a *app) waitSliceIP(t testing.TB, ip string, port int) {
	t.Helper()
	want := fmt.Sprintf("%s:%d", ip, port)
	testcluster.WaitFor(t, 30*time.Second, "an EndpointSlice with "+want, func() (bool, string) {
		ready, total, err := sliceEndpoints(testcluster.Context(t, 10*time.Second), a)
		if err != nil {
			return false, err.Error()
		}
		return total == 1 && len(ready) == 1 && ready[0] == want, fmt.Sprint(ready, total)
	})
}

func (a *app) waitSliceEmpty(t testing.TB) {
	t.Helper()
	testcluster.WaitFor(t, 30*time.Second, "the EndpointSlices to be emptied", func() (bool, string) {
		ready, total, err := sliceEndpoints(testcluster.Context(t, 10*time.Second), a)
		if err != nil {
			return false, err.Error()
		}
		return total == 0, fmt.Sprint(ready, total)
	})
}

// auditCounts counts the requests the app's ServiceAccount made on its UI Service, by verb,
// as the API server's audit log records them.
func (a *app) auditCounts(t testing.TB) map[string]int {
	t.Helper()
	return a.auditResource(t, "services")
}

// auditResource counts the app's ServiceAccount's requests on resource, by verb and code.
func (a *app) auditResource(t testing.TB, resource string) map[string]int {
	t.Helper()
	user := "system:serviceaccount:" + a.ns + ":" + sa
	counts := map[string]int{}
	err := testcluster.ReadAudit(auditLog, func(ev testcluster.AuditEvent) {
		if ev.Username == user && ev.Namespace == a.ns && ev.Resource == resource {
			counts[ev.Verb]++
			counts[fmt.Sprintf("%s %d", ev.Verb, ev.Code)]++
		}
	})
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return counts
}

// waitAudit waits until the audit log holds want's counts (events are written after the
// response), then checks nothing more arrives.
func (a *app) waitAudit(t testing.TB, want map[string]int) {
	t.Helper()
	match := func(got map[string]int) bool {
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	}
	testcluster.WaitFor(t, 10*time.Second, fmt.Sprintf("audit counts %v", want), func() (bool, string) {
		got := a.auditCounts(t)
		return match(got), fmt.Sprint(got)
	})
	time.Sleep(300 * time.Millisecond)
	if got := a.auditCounts(t); !match(got) {
		t.Fatalf("audit counts changed to %v, want %v", got, want)
	}
}

// freePortPair returns a listener on some port p and p+1 free to listen on.
func freePortPair(t testing.TB) (net.Listener, int) {
	t.Helper()
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p < 65535 {
			if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
				_ = l2.Close()
				return l, p
			}
		}
		_ = l.Close()
	}
	t.Fatal("no pair of adjacent free ports")
	return nil, 0
}

func startUI(t testing.TB, o fakespark.Options) *fakespark.Server {
	t.Helper()
	s, err := fakespark.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func sarFor(a *app) *authorizationv1.SubjectAccessReview {
	return &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + a.ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + a.ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.ns, Verb: "patch", Resource: "services", Name: a.service,
		},
	}}
}

func itoa(i int) string { return strconv.Itoa(i) }
