package binder

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// kubeflowTakeover is how the kubeflow operator writes its UI Service <app>-ui-svc when a
// Service of that name already exists (github.com/kubeflow/spark-operator,
// internal/controller/sparkapplication/driveringress.go createDriverIngressService, with
// web_ui.go createWebUIService and pkg/util/sparkapplication.go GetResourceLabels).
type kubeflowTakeover struct {
	name string
	// portName is spec.sparkUIOptions.servicePortName, else common.DefaultSparkWebUIPortName.
	portName string
	// serviceLabels is spec.sparkUIOptions.serviceLabels: when set it replaces the resource
	// labels (sparkoperator.k8s.io/app-name=<app>) whole.
	serviceLabels map[string]string
	// mergePatch: since commit 1ecb7ec6 (#3032, after v2.5.2) it reads Services through a cache filtered on
	// created-by-spark-operator=true, so a Service it did not create is not found, Create
	// fails with AlreadyExists, and it writes labels, annotations, owner and spec by a JSON
	// merge patch (maps merge: sparkui's labels stay). v2.5.2 and before: Get finds it and
	// Update replaces ports, selector, type, labels, annotations and ownerReferences.
	mergePatch bool
}

func (k kubeflowTakeover) apply(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, svcName, app string) {
	t.Helper()
	labels := map[string]string{"sparkoperator.k8s.io/app-name": app}
	if len(k.serviceLabels) > 0 {
		labels = map[string]string{}
		for key, v := range k.serviceLabels {
			labels[key] = v
		}
	}
	if k.mergePatch {
		labels["sparkoperator.k8s.io/created-by-spark-operator"] = "true"
	}
	owner := []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: app,
		UID: types.UID("00000000-0000-4000-8000-00000000cafe"), Controller: ptr(true)}}
	ports := []corev1.ServicePort{{Name: k.portName, Port: 4040, TargetPort: intstr.FromInt32(4040)}}
	selector := map[string]string{"sparkoperator.k8s.io/app-name": app, "spark-role": "driver"}
	if k.mergePatch {
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"labels": labels, "ownerReferences": owner},
			"spec":     map[string]any{"ports": ports, "selector": selector, "type": corev1.ServiceTypeClusterIP},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Services(ns).Patch(ctx, svcName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("kubeflow's merge patch: %v", err)
		}
		return
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports, svc.Spec.Selector, svc.Spec.Type = ports, selector, corev1.ServiceTypeClusterIP
	svc.Labels, svc.Annotations, svc.OwnerReferences = labels, nil, owner
	if _, err := cs.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubeflow's update: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestRefusesServiceKubeflowTookOver: sparkui's UI Service of SparkApplication
// foo is foo-sparkui-ui-svc (pinned), which is also the kubeflow operator's UI Service of a
// SparkApplication foo-sparkui. After the operator has written it its way, the runtime's
// bind and withdrawal are refused by their guards, with a message saying whose the Service
// is, and the operator's ports and selector stay as the operator wrote them: the runtime
// never routes it.
func TestRefusesServiceKubeflowTookOver(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx := testcluster.Context(t, 2*time.Minute)
	const app, kfApp = "foo", "foo-sparkui"
	svcName := kfApp + names.UISvcSuffix
	if svcName != names.KubeflowUIService(kfApp) {
		t.Fatalf("%s is not the operator's name for %s", svcName, kfApp)
	}
	for _, k := range []kubeflowTakeover{
		{name: "update", portName: "spark-driver-ui-port"},
		{name: "merge-patch", portName: "spark-driver-ui-port", mergePatch: true},
		// The user named the operator's UI port like Spark's and gave its Service labels of
		// their own, sparkui's application label among them (copied from sparkui's Service):
		// only the managed-by guard tells the Service apart.
		{name: "update-same-port-name", portName: "spark-ui", serviceLabels: map[string]string{"sparkui.dev/application": app, "team": "analytics"}},
	} {
		t.Run(k.name, func(t *testing.T) {
			ns := c.UniqueNamespace(t)
			// The UI Service as sparkui-fn emits it for a carrier (transform/service.go).
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: svcName, Namespace: ns, Labels: map[string]string{
					names.LabelManagedBy: names.ManagedByValue, "sparkui.dev/application": app}},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
					Ports: []corev1.ServicePort{{Name: names.UIPortName, Port: 4040, Protocol: corev1.ProtocolTCP}}},
			}
			if _, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			tg := Target{Namespace: ns, Service: svcName, PortName: names.UIPortName, GuardKey: "sparkui.dev/application", GuardValue: app,
				NoOwner: true, PodName: "foo-driver", PodUID: "00000000-0000-4000-8000-000000000f00",
				Selector: map[string]string{names.LabelAppSelector: "spark-0f00", names.LabelSparkRole: names.RoleDriver}, Role: "foo-sparkui-ui-svc-binder"}
			cl, err := NewClient(c.Config, tg)
			if err != nil {
				t.Fatal(err)
			}
			// Before the takeover the Service is sparkui's: the bind goes through.
			if err := cl.Bind(ctx, 4041); err != nil {
				t.Fatalf("bind before the takeover: %v", err)
			}
			k.apply(ctx, t, c.Client, ns, svcName, kfApp)
			taken, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}

			err = cl.Bind(ctx, 4042)
			var f *Failure
			if !errors.As(err, &f) || f.Kind != NotOurs {
				t.Fatalf("bind after the takeover: %v, want a not-ours refusal", err)
			}
			for _, want := range []string{"refused", "the kubeflow spark-operator has taken it over as its own UI Service of SparkApplication \"" + kfApp + "\"", "the runtime will not touch it"} {
				if !strings.Contains(f.Message, want) {
					t.Errorf("refusal %q does not say %q", f.Message, want)
				}
			}
			if w, err := cl.Withdraw(ctx, Handoff{}); err != nil || w != NotHeld {
				t.Errorf("withdraw after the takeover: %v %v, want not-held", w, err)
			}
			after, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after.ResourceVersion != taken.ResourceVersion {
				t.Errorf("the runtime changed the operator's Service: selector %v, ports %+v", after.Spec.Selector, after.Spec.Ports)
			}
			if after.Spec.Ports[0].TargetPort.IntValue() == 4042 {
				t.Errorf("the runtime routed the operator's Service to its port: %+v", after.Spec.Ports)
			}
		})
	}
}
