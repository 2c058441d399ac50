package testcluster

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRestartAPIServer: after StopAPIServer requests fail; after StartAPIServer the API
// server answers on the same address, to clients made before (the admin and a minted user,
// whose client certificates the same CA must still accept), with what etcd held, and the
// kube-controller-manager that kept running works against it again.
func TestRestartAPIServer(t *testing.T) {
	c := Start(t, Options{ControllerManager: true})
	host := c.Config.Host
	ns := c.UniqueNamespace(t)
	ctx := Context(t, time.Minute)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user, err := kubernetes.NewForConfig(c.UserConfig(t, "someone", "system:masters"))
	if err != nil {
		t.Fatal(err)
	}

	if err := c.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "before", metav1.GetOptions{}); err == nil {
		t.Fatal("the stopped API server answered")
	}
	if err := c.StopAPIServer(); err == nil {
		t.Error("a second StopAPIServer did not fail")
	}
	if err := c.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := c.StartAPIServer(); err == nil {
		t.Error("StartAPIServer on a running API server did not fail")
	}
	if c.Env.Config.Host != host {
		t.Errorf("the API server came back on %s, want %s", c.Env.Config.Host, host)
	}
	for name, cs := range map[string]kubernetes.Interface{"admin": c.Client, "user": user} {
		got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "before", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s after the restart: %v", name, err)
		}
		if got.Data["k"] != "v" {
			t.Errorf("%s after the restart: ConfigMap data %v, want what etcd held", name, got.Data)
		}
	}

	// The EndpointSlice controller, which kept running, fills a Service made after the restart.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "after"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, time.Minute, "the EndpointSlice controller to slice the Service made after the restart", func() (bool, string) {
		l, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=after"})
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) > 0, "no EndpointSlice"
	})
}

// TestRestartSharedRefused: a Shared cluster's API server serves other tests; it is not
// stopped under them.
func TestRestartSharedRefused(t *testing.T) {
	c := cluster(t)
	if err := c.StopAPIServer(); !errors.Is(err, errShared) {
		t.Fatalf("StopAPIServer on a Shared cluster: %v, want %v", err, errShared)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(Context(t, time.Minute), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Shared cluster after the refused stop: %v", err)
	}
}
