package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

func uiService(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wordcount-ui-svc", Namespace: ns,
			Labels:      map[string]string{managedBy: managedByThis, "spark-app-selector": "spark-1"},
			Annotations: map[string]string{annoProvide: "true"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 4440, TargetPort: intstr.FromInt32(4440)}}},
	}
}

func ingress(ns string, tls bool, port networkingv1.ServiceBackendPort) *networkingv1.Ingress {
	pt := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-ui", Namespace: ns},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: "spark.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/wordcount", PathType: &pt,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "wordcount-ui-svc", Port: port}},
			}}}},
		}}},
	}
	if tls {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"spark.example.com"}, SecretName: "tls"}}
	}
	return ing
}

func TestResolve(t *testing.T) {
	svc := uiService("ns")
	for _, tc := range []struct {
		name string
		ing  *networkingv1.Ingress
		want string
	}{
		{"https by port name", ingress("ns", true, networkingv1.ServiceBackendPort{Name: "https"}), "https://spark.example.com/wordcount"},
		{"http by port number", ingress("ns", false, networkingv1.ServiceBackendPort{Number: 4440}), "http://spark.example.com/wordcount"},
		{"other port", ingress("ns", true, networkingv1.ServiceBackendPort{Number: 80}), ""},
	} {
		if got := Resolve(svc, []*networkingv1.Ingress{tc.ing}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestContract runs the controller against a real API server: no URI before the runtime has
// bound the Service, the Ingress's URI once bound, none again once withdrawn or unrouted.
func TestContract(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ns := c.UniqueNamespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svcs := c.Client.CoreV1().Services(ns)
	if _, err := svcs.Create(ctx, uiService(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.NetworkingV1().Ingresses(ns).Create(ctx, ingress(ns, true, networkingv1.ServiceBackendPort{Name: "https"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c.Client, ns, time.Minute) }()

	uri := func() (string, bool) {
		s, err := svcs.Get(ctx, "wordcount-ui-svc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := s.Annotations[annoResolved]
		return v, ok
	}
	eventually := func(what string, want string, present bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			v, ok := uri()
			if ok == present && v == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: annotation %q (present %v), want %q (present %v)", what, v, ok, want, present)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	setSelector := func(sel string) {
		patch := []byte(`{"spec":{"selector":` + sel + `}}`)
		if _, err := svcs.Patch(ctx, "wordcount-ui-svc", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	time.Sleep(500 * time.Millisecond)
	if v, ok := uri(); ok {
		t.Fatalf("unbound Service got a URI: %q", v)
	}
	setSelector(`{"spark-app-selector":"spark-1","spark-role":"driver"}`)
	eventually("bound", "https://spark.example.com/wordcount", true)
	setSelector(`{"spark-app-selector":null,"spark-role":null,"sparkui.dev/withdrawn":"uid-1"}`)
	eventually("withdrawn", "", false)
	setSelector(`{"sparkui.dev/withdrawn":null,"spark-app-selector":"spark-1"}`)
	eventually("bound again", "https://spark.example.com/wordcount", true)
	setSelector(`{"spark-app-selector":null,"spark-role":null,"sparkui.dev/history-redirector":"true"}`)
	eventually("handed off to the History Server", "", false)
	setSelector(`{"sparkui.dev/history-redirector":null,"spark-app-selector":"spark-1"}`)
	eventually("bound after the hand-off", "https://spark.example.com/wordcount", true)
	if err := c.Client.NetworkingV1().Ingresses(ns).Delete(ctx, "spark-ui", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("Ingress gone", "", false)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
