package binder

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestBindLeavesConnectPort: a UI Service with the second port spark-connect that
// spec.route.grpc adds (transform/route.go setConnectPort: declared targetPort) is bound and
// withdrawn (and handed off to the History Server's redirector) by patches of its first port only. Against a real API server: the bind sets
// ports[0].targetPort and the selector, the withdrawal replaces the selector, and the
// spark-connect port keeps its port and targetPort through both.
func TestBindLeavesConnectPort(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx := testcluster.Context(t, 2*time.Minute)
	ns := c.UniqueNamespace(t)
	const svcName, app = "connect-sparkui-ui-svc", "connect"
	connect := corev1.ServicePort{Name: names.ConnectPortName, Protocol: corev1.ProtocolTCP, Port: 15002, TargetPort: intstr.FromInt32(15003)}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svcName, Namespace: ns, Labels: map[string]string{
			names.LabelManagedBy: names.ManagedByValue, "sparkui.dev/application": app}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{
			{Name: names.UIPortName, Port: 4040, Protocol: corev1.ProtocolTCP}, connect}},
	}
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tg := Target{Namespace: ns, Service: svcName, PortName: names.UIPortName, GuardKey: "sparkui.dev/application", GuardValue: app,
		NoOwner: true, PodName: "connect-0", PodUID: "00000000-0000-4000-8000-000000000c0c",
		Selector: map[string]string{"statefulset.kubernetes.io/pod-name": "connect-0", names.LabelSparkRole: names.RoleDriver}}
	cl, err := NewClient(c.Config, tg)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, wantTarget int, wantSelector map[string]string) {
		t.Helper()
		got, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Ports) != 2 || got.Spec.Ports[0].TargetPort.IntValue() != wantTarget ||
			got.Spec.Ports[1].Name != connect.Name || got.Spec.Ports[1].Port != connect.Port || got.Spec.Ports[1].TargetPort != connect.TargetPort {
			t.Errorf("%s: ports %+v, want the UI port targeting %d and %+v unchanged", when, got.Spec.Ports, wantTarget, connect)
		}
		for k, v := range wantSelector {
			if got.Spec.Selector[k] != v {
				t.Errorf("%s: selector %v, want %v", when, got.Spec.Selector, wantSelector)
			}
		}
	}
	if err := cl.Bind(ctx, 4041); err != nil {
		t.Fatalf("bind: %v", err)
	}
	check("after the bind", 4041, tg.Selector)
	if w, err := cl.Withdraw(ctx, Handoff{}); err != nil || w == NotHeld {
		t.Fatalf("withdraw: %v %v", w, err)
	}
	check("after the withdrawal", 4041, tg.WithdrawnSelector())
	// The History Server hand-off retargets the UI port only: Connect's port never reaches
	// the redirector's.
	if err := cl.Bind(ctx, 4042); err != nil {
		t.Fatalf("rebind: %v", err)
	}
	check("after the rebind", 4042, tg.Selector)
	if w, err := cl.Withdraw(ctx, Handoff{URI: "https://history.example.com/history/spark-1/", Port: 8090}); err != nil || w == NotHeld {
		t.Fatalf("hand-off: %v %v", w, err)
	}
	check("after the hand-off", 8090, names.RedirectorSelector())
}
