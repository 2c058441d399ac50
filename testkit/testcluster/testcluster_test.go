package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func TestMain(m *testing.M) { Main(m) }

// cluster is the control plane shared by this package's tests: one start, with
// kube-controller-manager, for all of them.
func cluster(t *testing.T) *Cluster {
	t.Helper()
	return Shared(t, Options{ControllerManager: true})
}

const validService = `
apiVersion: v1
kind: Service
metadata:
  name: ui
  labels: {app: spark}
spec:
  selector: {spark-role: driver}
  ports:
  - name: spark-ui
    port: 4040
    targetPort: 4040
`

func TestDryRunAcceptsValidService(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	if err := c.DryRunCreateYAML(ctx, []byte(validService)); err != nil {
		t.Fatalf("valid Service rejected: %v", err)
	}
	// Dry run: nothing was stored.
	if _, err := c.Client.CoreV1().Services("default").Get(ctx, "ui", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry-run create stored the Service (get: %v)", err)
	}
}

func TestDryRunCreatesMissingNamespace(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	ns := "dry-run-" + rand.String(6)
	doc := strings.Replace(validService, "  name: ui\n", "  name: ui\n  namespace: "+ns+"\n", 1)
	if err := c.DryRunCreateYAML(ctx, []byte(doc)); err != nil {
		t.Fatalf("Service in a new namespace rejected: %v", err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace %s not created: %v", ns, err)
	}
}

func TestDryRunRejectsServicePortZero(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	doc := strings.Replace(validService, "    port: 4040\n", "    port: 0\n", 1)
	err := c.DryRunCreateYAML(ctx, []byte(doc))
	if err == nil {
		t.Fatal("Service with port 0 accepted")
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want 422 Invalid, got %v (%T)", err, err)
	}
	if !strings.Contains(err.Error(), "spec.ports[0].port") {
		t.Fatalf("error does not name spec.ports[0].port: %v", err)
	}
}

func TestDryRunRejectsContainerPortZero(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	pod := `
apiVersion: v1
kind: Pod
metadata: {name: driver}
spec:
  containers:
  - name: spark-kubernetes-driver
    image: spark:4.0.0
    ports:
    - {name: spark-ui, containerPort: 0, protocol: TCP}
`
	err := c.DryRunCreateYAML(ctx, []byte(pod))
	if err == nil {
		t.Fatal("Pod with containerPort 0 accepted")
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want 422 Invalid, got %v", err)
	}
	if !strings.Contains(err.Error(), "spec.containers[0].ports[0].containerPort") {
		t.Fatalf("error does not name the containerPort: %v", err)
	}
	// The same Pod with a real port passes: the rejection was about the port.
	if err := c.DryRunCreateYAML(ctx, []byte(strings.Replace(pod, "containerPort: 0", "containerPort: 4040", 1))); err != nil {
		t.Fatalf("valid Pod rejected: %v", err)
	}
}

func TestDryRunRejectsUnknownField(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	doc := strings.Replace(validService, "spec:\n", "spec:\n  selectorr: {a: b}\n", 1)
	err := c.DryRunCreateYAML(ctx, []byte(doc))
	if err == nil {
		t.Fatal("unknown field accepted")
	}
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "spec.selectorr"`) {
		t.Fatalf("want 400 naming unknown field spec.selectorr, got %v", err)
	}
}

func TestDryRunUnknownKind(t *testing.T) {
	c := cluster(t)
	err := c.DryRunCreateYAML(Context(t, 30*time.Second), []byte("apiVersion: sparkui.dev/v1alpha1\nkind: Nope\nmetadata: {name: x}\n"))
	if err == nil || !strings.Contains(err.Error(), "sparkui.dev") {
		t.Fatalf("want a no-match error for an unknown kind, got %v", err)
	}
}

func TestDecodeYAMLErrors(t *testing.T) {
	for _, doc := range []string{"", "---\n", "a: [", "kind: Service\nkind: Pod\n"} {
		if _, err := DecodeYAML([]byte(doc)); err == nil {
			t.Errorf("DecodeYAML(%q): no error", doc)
		}
	}
}

func TestServiceAccountUnderRBAC(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 60*time.Second)
	const ns, sa = "ns1", "spark"
	c.EnsureNamespace(t, ns)
	for _, name := range []string{"ui", "other"} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"spark-role": "driver"},
				Ports:    []corev1.ServicePort{{Name: "spark-ui", Port: 4040, TargetPort: intstr.FromInt32(4040)}},
			},
		}
		if _, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	cfg := c.ServiceAccountConfig(t, ns, sa)
	user, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The identity is what the API server sees for a ServiceAccount token.
	review, err := user.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	who := review.Status.UserInfo
	groups := append([]string(nil), who.Groups...)
	sort.Strings(groups)
	if who.Username != "system:serviceaccount:ns1:spark" ||
		strings.Join(groups, ",") != "system:authenticated,system:serviceaccounts,system:serviceaccounts:ns1" {
		t.Fatalf("authenticated as %q %q", who.Username, who.Groups)
	}

	_, err = user.CoreV1().Services(ns).Get(ctx, "ui", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("without RBAC: want 403 on get services, got %v", err)
	}

	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkui", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"services"},
			ResourceNames: []string{"ui"},
			Verbs:         []string{"get", "patch"},
		}},
	}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkui", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "sparkui"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The authorizer sees RBAC objects through an informer: allow it a moment.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = user.CoreV1().Services(ns).Get(ctx, "ui", metav1.GetOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("with the Role: get services/ui: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	patch := []byte(`{"metadata":{"labels":{"sparkui.dev/bound":"true"}}}`)
	got, err := user.CoreV1().Services(ns).Patch(ctx, "ui", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("with the Role: patch services/ui: %v", err)
	}
	if got.Labels["sparkui.dev/bound"] != "true" {
		t.Fatalf("patch not applied: %v", got.Labels)
	}
	if _, err := user.CoreV1().Services(ns).Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("get services/other: want 403, got %v", err)
	}
	if _, err := user.CoreV1().Services(ns).Patch(ctx, "other", types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("patch services/other: want 403, got %v", err)
	}
	if _, err := user.CoreV1().Services(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list services: want 403 (resourceNames do not grant list), got %v", err)
	}
	// Another ServiceAccount in the namespace is not bound.
	other, err := kubernetes.NewForConfig(c.ServiceAccountConfig(t, ns, "someone-else"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.CoreV1().Services(ns).Get(ctx, "ui", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("unbound ServiceAccount: want 403, got %v", err)
	}
}

// sliceState summarises a Service's EndpointSlices: "ip:port" for every ready
// endpoint, the number of endpoints (ready or not), and the slices managed by
// the EndpointSlice controller (as opposed to mirrored ones).
type sliceState struct {
	ready     []string
	total     int
	managed   int
	mirrored  int
	summaries []string
}

func (s sliceState) String() string { return strings.Join(s.summaries, "; ") }

func slices(ctx context.Context, c *Cluster, ns, svc string) (sliceState, error) {
	var st sliceState
	list, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc,
	})
	if err != nil {
		return st, err
	}
	for _, s := range list.Items {
		switch s.Labels[discoveryv1.LabelManagedBy] {
		case "endpointslice-controller.k8s.io":
			st.managed++
		case "endpointslicemirroring-controller.k8s.io":
			st.mirrored++
		}
		var eps []string
		st.total += len(s.Endpoints)
		for _, ep := range s.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			for _, addr := range ep.Addresses {
				for _, p := range s.Ports {
					if p.Port == nil {
						continue
					}
					e := fmt.Sprintf("%s:%d", addr, *p.Port)
					if ready {
						st.ready = append(st.ready, e)
					}
					eps = append(eps, fmt.Sprintf("%s(ready=%t)", e, ready))
				}
			}
		}
		st.summaries = append(st.summaries, fmt.Sprintf("%s[%s]{%s}", s.Name, s.Labels[discoveryv1.LabelManagedBy], strings.Join(eps, ",")))
	}
	return st, nil
}

// readyDriver creates a Node and a Pod on it whose status (set through the
// status subresource, there is no kubelet) is Running and Ready with podIP.
func readyDriver(ctx context.Context, t *testing.T, c *Cluster, ns, podIP string) *corev1.Pod {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: ns, Labels: map[string]string{"spark-role": "driver"}},
		Spec: corev1.PodSpec{
			// The EndpointSlice controller skips a Pod whose Node it cannot find.
			NodeName: node.Name,
			Containers: []corev1.Container{{
				Name:  "spark-kubernetes-driver",
				Image: "spark:4.0.0",
				Ports: []corev1.ContainerPort{{Name: "spark-ui", ContainerPort: 4041}},
			}},
		},
	}
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase:  corev1.PodRunning,
		PodIP:  podIP,
		PodIPs: []corev1.PodIP{{IP: podIP}},
		HostIP: "192.0.2.10",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	pod, err = c.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("pod status: %v", err)
	}
	return pod
}

func uiService(ns string, owner *corev1.Pod) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"spark-role": "driver"},
			Ports:    []corev1.ServicePort{{Name: "spark-ui", Port: 4040, TargetPort: intstr.FromInt32(4041)}},
		},
	}
	if owner != nil {
		// Collected with the Pod, as the runtime's bind arranges.
		svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: owner.UID}}
	}
	return svc
}

func TestControllerManagerEndpointSlicesAndGC(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 120*time.Second)
	ns := c.UniqueNamespace(t)
	const podIP = "10.244.1.7"
	pod := readyDriver(ctx, t, c, ns, podIP)
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, uiService(ns, pod), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	want := podIP + ":4041"
	WaitFor(t, 30*time.Second, "an EndpointSlice with "+want, func() (bool, string) {
		st, err := slices(ctx, c, ns, "ui")
		if err != nil {
			return false, err.Error()
		}
		return len(st.ready) == 1 && st.ready[0] == want && st.managed == 1, st.String()
	})

	// Withdraw: a selector that matches nothing empties the slice.
	patch := []byte(`{"spec":{"selector":{"spark-role":null,"sparkui.dev/withdrawn":"` + string(pod.UID) + `"}}}`)
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, "ui", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, "the EndpointSlice to be emptied", func() (bool, string) {
		st, err := slices(ctx, c, ns, "ui")
		if err != nil {
			return false, err.Error()
		}
		return st.total == 0 && st.managed >= 1, st.String()
	})

	// Garbage collection: deleting the Pod (no kubelet here: grace period 0)
	// deletes the Service it owns.
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 60*time.Second, "the garbage collector to delete the Service", func() (bool, string) {
		_, err := c.Client.CoreV1().Services(ns).Get(ctx, "ui", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// TestControllerManagerRemovedSelectorKeepsEndpoint pins the fact the design
// rests on: removing a Service's selector does not withdraw the endpoint.
func TestControllerManagerRemovedSelectorKeepsEndpoint(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 120*time.Second)
	ns := c.UniqueNamespace(t)
	const podIP = "10.244.1.8"
	readyDriver(ctx, t, c, ns, podIP)
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, uiService(ns, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := podIP + ":4041"
	WaitFor(t, 30*time.Second, "an EndpointSlice with "+want, func() (bool, string) {
		st, err := slices(ctx, c, ns, "ui")
		if err != nil {
			return false, err.Error()
		}
		return len(st.ready) == 1 && st.ready[0] == want, st.String()
	})

	patch := []byte(`[{"op":"remove","path":"/spec/selector"}]`)
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, "ui", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Give the controllers time to act, then check the endpoint is still served.
	time.Sleep(3 * time.Second)
	st, err := slices(ctx, c, ns, "ui")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after removing the selector: %s", st)
	found := false
	for _, e := range st.ready {
		found = found || e == want
	}
	if !found {
		t.Fatalf("the endpoint %s was withdrawn by removing the selector (slices: %s); the design's premise changed", want, st)
	}
}

// fatalTB records Fatalf instead of failing the test, to check what Start does
// when the binaries are missing.
type fatalTB struct {
	testing.TB
	fatal   string
	skipped bool
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalTB) Skip(args ...any)                 { f.skipped = true; runtime.Goexit() }
func (f *fatalTB) Skipf(format string, args ...any) { f.skipped = true; runtime.Goexit() }
func (f *fatalTB) SkipNow()                         { f.skipped = true; runtime.Goexit() }

func TestMissingBinariesFailNotSkip(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("SPARKUI_CACHE", empty)
	if got, want := Dir(), filepath.Join(empty, "control-plane", Version); got != want {
		t.Fatalf("Dir() = %q, want %q", got, want)
	}
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, Options{ControllerManager: true})
		t.Error("Start returned without failing")
	}()
	<-done
	if f.skipped {
		t.Fatal("Start skipped the test on missing binaries")
	}
	for _, want := range []string{"make control-plane", "kube-apiserver", "etcd", "kube-controller-manager"} {
		if !strings.Contains(f.fatal, want) {
			t.Errorf("fatal message %q does not mention %q", f.fatal, want)
		}
	}
}

func TestStartAndStop(t *testing.T) {
	// A cluster of its own, without kube-controller-manager, stopped at the end.
	c := Start(t, Options{})
	ctx := Context(t, 30*time.Second)
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != Version {
		t.Errorf("server version %s, want %s", v.GitVersion, Version)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := c.KubeconfigFile(t, c.ServiceAccountConfig(t, "ns1", "spark"))
	if data, err := os.ReadFile(kc); err != nil || !strings.Contains(string(data), c.Config.Host) {
		t.Fatalf("kubeconfig %s: %v\n%s", kc, err, data)
	}
	logDir := c.LogDir()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := os.Stat(logDir); !os.IsNotExist(err) {
		t.Errorf("log dir %s left behind", logDir)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Error("API server still answers after Stop")
	}
}
