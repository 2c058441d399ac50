package uistate

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func uiSvc(name string, lbl map[string]string, sel map[string]string, target intstr.IntOrString, ann map[string]string) *corev1.Service {
	l := map[string]string{"app.kubernetes.io/managed-by": "sparkui"}
	for k, v := range lbl {
		l[k] = v
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: l, Annotations: ann, CreationTimestamp: metav1.NewTime(t0)},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: sel, Ports: []corev1.ServicePort{{Name: "spark-ui", Port: 4040, TargetPort: target}}},
	}
}

func pod(name, uid string, lbl map[string]string, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid), Labels: lbl, CreationTimestamp: metav1.NewTime(t0)},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func ctrl(apiVersion, kind, name string) *metav1.OwnerReference {
	yes := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(kind + "-" + name), Controller: &yes}
}

// row is what list shows of one application, plus how its Pod was found.
type row struct {
	Name, Carrier, State, Port, Link, Pod, Disagree string
}

// TestFindStatesAndLinks: one namespace holding each state the runtime writes, each carrier
// chain the typed clients read, each link, and claims that agree or contradict the spec.
func TestFindStatesAndLinks(t *testing.T) {
	app := func(n string) map[string]string { return map[string]string{"sparkui.dev/application": n} }
	sub := func(id string) map[string]string { return map[string]string{"spark-app-selector": id} }
	objs := []runtime.Object{
		// spark-submit, bound, owned by its Pod; claims agree; a resolved external URI.
		uiSvc("pi-ui-svc", sub("spark-1"), map[string]string{"spark-app-selector": "spark-1", "spark-role": "driver"}, intstr.FromInt32(4041),
			map[string]string{"sparkui.dev/ui-state": "bound", "sparkui.dev/ui-port": "4041", "sparkui.dev/resolved-external-uri": "http://10.0.0.1:30080"}),
		pod("pi-driver", "uid-pi", map[string]string{"spark-app-selector": "spark-1", "spark-role": "driver"}, nil),
		// Deployment → ReplicaSet → Pod, bound with the bound-pod label; a route with an Ingress over TLS.
		uiSvc("conn-sparkui-ui-svc", app("conn"), map[string]string{"sparkui.dev/application": "conn", "spark-role": "driver"}, intstr.FromInt32(4045),
			map[string]string{"sparkui.dev/route-host": "spark.example.com", "sparkui.dev/route-prefix": "/spark/ns/conn"}),
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "conn-7d9", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{*ctrl("apps/v1", "Deployment", "conn")}}},
		pod("conn-7d9-abc", "uid-conn", map[string]string{"sparkui.dev/application": "conn", "spark-role": "driver"}, ctrl("apps/v1", "ReplicaSet", "conn-7d9")),
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "conn-sparkui", Namespace: "ns"}, Spec: networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"spark.example.com"}}},
			Rules: []networkingv1.IngressRule{{Host: "spark.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/spark/ns/conn", Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "conn-sparkui-ui-svc"}}}}}}}}}},
		// CronJob → Job → Pod, withdrawn; the claim still says bound.
		uiSvc("nightly-sparkui-ui-svc", app("nightly"), map[string]string{"sparkui.dev/withdrawn": "uid-n1"}, intstr.FromInt32(4040),
			map[string]string{"sparkui.dev/ui-state": "bound"}),
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-1", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{*ctrl("batch/v1", "CronJob", "nightly")}}},
		pod("nightly-1-x", "uid-n1", map[string]string{"sparkui.dev/application": "nightly", "spark-role": "driver"}, ctrl("batch/v1", "Job", "nightly-1")),
		// spark-submit handed off; its Pod gone; a route without a host.
		uiSvc("etl-ui-svc", sub("spark-2"), map[string]string{"sparkui.dev/history-redirector": "true"}, intstr.FromInt32(8080),
			map[string]string{"sparkui.dev/history-uri": "https://history.example.com/history/spark-2/", "sparkui.dev/route-prefix": "/spark/ns/etl"}),
		// A kubeflow SparkApplication's Pod, waiting (no selector); the operator's ownerReference names the carrier.
		uiSvc("wc-sparkui-ui-svc", app("wc"), nil, intstr.FromInt32(4040), map[string]string{"sparkui.dev/ui-reason": "port 4040: TLS the runtime cannot verify"}),
		pod("wc-driver", "uid-wc", map[string]string{"sparkui.dev/application": "wc", "spark-role": "driver"}, ctrl("sparkoperator.k8s.io/v1beta2", "SparkApplication", "wc")),
		// A schedule's next run waits on the Service its earlier run withdrew (whose bound-pod
		// label stays until the next bind): the claims agree, and the waiting run's Pod is shown.
		uiSvc("batch-sparkui-ui-svc", map[string]string{"sparkui.dev/application": "batch", "sparkui.dev/bound-pod": "uid-b1"},
			map[string]string{"sparkui.dev/withdrawn": "uid-b1"}, intstr.FromInt32(4040),
			map[string]string{"sparkui.dev/ui-state": "waiting", "sparkui.dev/ui-pod": "batch-2-x", "sparkui.dev/ui-reason": "port 4040: TLS the runtime cannot verify"}),
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch-2", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{*ctrl("batch/v1", "CronJob", "batch")}}},
		pod("batch-1-x", "uid-b1", map[string]string{"sparkui.dev/application": "batch", "spark-role": "driver"}, ctrl("batch/v1", "Job", "batch-1")),
		pod("batch-2-x", "uid-b2", map[string]string{"sparkui.dev/application": "batch", "spark-role": "driver"}, ctrl("batch/v1", "Job", "batch-2")),
		// Waiting, no Pod yet: the carrier from the label.
		uiSvc("late-sparkui-ui-svc", app("late"), nil, intstr.FromInt32(4040), nil),
		// Bound, but the port claim contradicts the spec.
		uiSvc("nb-sparkui-ui-svc", map[string]string{"sparkui.dev/application": "nb", "sparkui.dev/bound-pod": "uid-nb"}, map[string]string{"sparkui.dev/application": "nb"}, intstr.FromInt32(4041),
			map[string]string{"sparkui.dev/ui-state": "bound", "sparkui.dev/ui-port": "4040"}),
		pod("nb-0", "uid-nb", map[string]string{"sparkui.dev/application": "nb", "spark-role": "driver"}, ctrl("apps/v1", "StatefulSet", "nb")),
		// Not a UI Service: sparkui's label without an identity.
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns", Labels: map[string]string{"app.kubernetes.io/managed-by": "sparkui"}}},
		// Another namespace: not listed with -n ns.
		func() *corev1.Service {
			s := uiSvc("x-ui-svc", sub("x"), nil, intstr.FromInt32(4040), nil)
			s.Namespace = "other"
			return s
		}(),
	}
	cs := fake.NewClientset(objs...)
	apps, err := Find(context.Background(), cs, "ns")
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	for _, a := range apps {
		r := row{Name: a.Name, Carrier: a.Carrier, State: string(a.State), Port: a.Port, Link: a.Link(), Disagree: a.Disagree}
		if a.Pod != nil {
			r.Pod = a.Pod.Name + " (" + a.PodNote + ")"
		} else {
			r.Pod = "none (" + a.PodNote + ")"
		}
		got = append(got, r)
	}
	want := []row{
		{Name: "batch", Carrier: "CronJob/batch", State: "withdrawn", Pod: "batch-2-x (named by sparkui.dev/ui-pod)"},
		{Name: "conn", Carrier: "Deployment/conn", State: "bound", Port: "4045", Link: "https://spark.example.com/spark/ns/conn/",
			Pod: "conn-7d9-abc (newest Pod labelled sparkui.dev/application=conn)"},
		{Name: "etl", Carrier: "Pod/etl-driver", State: "handed-off", Port: "8080", Link: "https://history.example.com/history/spark-2/",
			Pod: "none (no driver Pod labelled spark-app-selector=spark-2)"},
		{Name: "late", Carrier: "sparkui.dev/application=late", State: "waiting", Pod: "none (no driver Pod labelled sparkui.dev/application=late)"},
		{Name: "nb", Carrier: "StatefulSet/nb", State: "bound", Port: "4041", Pod: "nb-0 (bound by (sparkui.dev/bound-pod))",
			Disagree: "sparkui.dev/ui-port says 4040, the spec's targetPort is 4041"},
		{Name: "nightly", Carrier: "CronJob/nightly", State: "withdrawn", Pod: "nightly-1-x (withdrawn by)",
			Disagree: "sparkui.dev/ui-state says bound, the spec says withdrawn"},
		{Name: "pi", Carrier: "Pod/pi-driver", State: "bound", Port: "4041", Link: "http://10.0.0.1:30080",
			Pod: "pi-driver (newest Pod labelled spark-app-selector=spark-1)"},
		{Name: "wc", Carrier: "SparkApplication/wc", State: "waiting", Pod: "wc-driver (newest Pod labelled sparkui.dev/application=wc)"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("applications (-want +got):\n%s", d)
	}

	// -A lists the other namespace's too; Get finds by name or by Service, and names the
	// applications there are when it finds none.
	all, err := Find(context.Background(), cs, "")
	if err != nil || len(all) != len(want)+1 {
		t.Errorf("every namespace: %d applications, %v; want %d", len(all), err, len(want)+1)
	}
	if a, err := Get(context.Background(), cs, "ns", "conn-sparkui-ui-svc"); err != nil || a.Name != "conn" {
		t.Errorf("Get by Service: %v %v", a, err)
	}
	_, err = Get(context.Background(), cs, "ns", "nope")
	if want := `no application "nope" in namespace "ns"; there are: batch, conn, etl, late, nb, nightly, pi, wc`; err == nil || err.Error() != want {
		t.Errorf("Get of a missing application: %v, want %s", err, want)
	}
}

// TestClaimsUnreadable: a since that is not RFC 3339 is reported, not taken.
func TestClaimsUnreadable(t *testing.T) {
	c, problem := ReadClaims(uiSvc("a", nil, nil, intstr.FromInt32(1), map[string]string{"sparkui.dev/ui-since": "yesterday", "sparkui.dev/ui-state": "waiting"}))
	if !c.Since.IsZero() || problem != `sparkui.dev/ui-since "yesterday" is not RFC 3339` || c.State != "waiting" {
		t.Errorf("claims %+v, problem %q", c, problem)
	}
	c, problem = ReadClaims(uiSvc("a", nil, nil, intstr.FromInt32(1), map[string]string{"sparkui.dev/ui-since": "2026-12-05T10:00:00Z"}))
	if !c.Since.Equal(t0) || problem != "" {
		t.Errorf("claims %+v, problem %q", c, problem)
	}
}
