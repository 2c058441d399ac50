package binder

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestGuardsRefuseForeignService: the Role sparkui writes lets the driver's ServiceAccount
// patch the Service named <prefix>-ui-svc whatever it holds, so the guards in the patch are all
// that keeps the runtime off a Service of that name that is not its application's. Against a
// real API server, as that ServiceAccount under exactly that Role: a Service with sparkui's
// managed-by label and the right port name but another application's identity label, and one
// with our identity label but no managed-by label, are refused by the JSON Patch `test`
// operations (422), left exactly as they were, and the refusal says whose the Service is. A
// Service that is ours binds under the same Role, so the refusals come from the guards, not
// from RBAC.
// labelApplication is the identity label of every carrier but a spark-submit Pod
// (internal/app.LabelApplication).
const labelApplication = names.AnnotationPrefix + "application"

func TestGuardsRefuseForeignService(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	const svcName, sa = "wordcount-ui-svc", "spark"
	ours := func(k string) map[string]string {
		return map[string]string{names.LabelManagedBy: names.ManagedByValue, k: "wordcount"}
	}
	for _, tc := range []struct {
		name string
		// guardKey is the identity label the runtime is told to test: spark-app-selector for
		// a spark-submit Pod (AppID), sparkui.dev/application for the other carriers.
		guardKey string
		labels   map[string]string
		// want are what the refusal must say about whose the Service is.
		want []string
	}{
		{name: "spark-submit-ours", guardKey: names.LabelAppSelector, labels: ours(names.LabelAppSelector)},
		{name: "carrier-ours", guardKey: labelApplication, labels: ours(labelApplication)},
		{name: "spark-submit-other-app", guardKey: names.LabelAppSelector,
			labels: map[string]string{names.LabelManagedBy: names.ManagedByValue, names.LabelAppSelector: "spark-weekly"},
			want:   []string{`it belongs to application "spark-weekly" (label spark-app-selector=spark-weekly)`, `managed by "sparkui"`}},
		{name: "carrier-other-app", guardKey: labelApplication,
			labels: map[string]string{names.LabelManagedBy: names.ManagedByValue, labelApplication: "weekly"},
			want:   []string{`it belongs to application "weekly" (label ` + labelApplication + `=weekly)`, `managed by "sparkui"`}},
		{name: "carrier-no-identity", guardKey: labelApplication,
			labels: map[string]string{names.LabelManagedBy: names.ManagedByValue},
			want:   []string{"it has no " + labelApplication + " label"}},
		{name: "spark-submit-not-managed", guardKey: names.LabelAppSelector,
			labels: map[string]string{names.LabelAppSelector: "wordcount"},
			want:   []string{`it belongs to application "wordcount"`, "it has no " + names.LabelManagedBy + " label"}},
		{name: "carrier-managed-by-other", guardKey: labelApplication,
			labels: map[string]string{names.LabelManagedBy: "helm", labelApplication: "wordcount"},
			want:   []string{`managed by "helm"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testcluster.Context(t, time.Minute)
			ns := c.UniqueNamespace(t)
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: svcName, Namespace: ns, Labels: tc.labels},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
					Ports: []corev1.ServicePort{{Name: names.UIPortName, Port: 4040, Protocol: corev1.ProtocolTCP}}},
			}
			before, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			user := driverRBAC(ctx, t, c, ns, sa, svcName)
			tg := Target{Namespace: ns, Service: svcName, PortName: names.UIPortName, PodName: "wordcount-driver",
				PodUID: "00000000-0000-4000-8000-00000000b1d0", Role: sidecar.DefaultRole(svcName),
				Selector: DefaultSelector("wordcount")}
			if tc.guardKey == names.LabelAppSelector {
				tg.AppID = "wordcount"
			} else {
				tg.GuardKey, tg.GuardValue, tg.NoOwner = labelApplication, "wordcount", true
			}
			cl, err := NewClient(user, tg)
			if err != nil {
				t.Fatal(err)
			}
			err = cl.Bind(ctx, 4041)
			after, gerr := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("bind of our own Service as %s: %v", sa, err)
				}
				if after.Spec.Ports[0].TargetPort.IntValue() != 4041 || after.Spec.Selector[names.LabelAppSelector] != "wordcount" {
					t.Fatalf("our Service after the bind: %+v", after.Spec)
				}
				return
			}
			var f *Failure
			if !errors.As(err, &f) || f.Kind != NotOurs {
				t.Fatalf("bind of a Service labelled %v: %v, want a not-ours refusal", tc.labels, err)
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != http.StatusUnprocessableEntity {
				t.Errorf("refusal %v: want the API server's 422 from the test operation", err)
			}
			for _, w := range append(tc.want, "refused", "the runtime will not touch it") {
				if !strings.Contains(f.Message, w) {
					t.Errorf("refusal %q does not say %q", f.Message, w)
				}
			}
			if w, err := cl.Withdraw(ctx, Handoff{}); err != nil || w != NotHeld {
				t.Errorf("withdraw of the Service: %v %v, want not-held", w, err)
			}
			after, err = c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after.ResourceVersion != before.ResourceVersion || len(after.Spec.Selector) != 0 ||
				after.Spec.Ports[0].TargetPort.IntValue() != 4040 || len(after.OwnerReferences) != 0 ||
				after.Labels[sidecar.LabelBoundPod] != "" {
				t.Errorf("the Service was changed: labels %v, owners %v, spec %+v", after.Labels, after.OwnerReferences, after.Spec)
			}
		})
	}
}

// driverRBAC creates, in ns, the Role and RoleBinding sparkui writes for UI Service svc
// (docs/rbac.md: get and patch on that Service by name) bound to ServiceAccount sa, waits
// until the authorizer applies them, and returns a configuration authenticating as sa.
func driverRBAC(ctx context.Context, t *testing.T, c *testcluster.Cluster, ns, sa, svc string) *rest.Config {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: sidecar.DefaultRole(svc), Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"},
			ResourceNames: []string{svc}, Verbs: sidecar.RuntimeVerbs}},
	}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := c.ServiceAccountConfig(t, ns, sa)
	// The authorizer reads RBAC objects through an informer: wait until it allows the GET
	// (a read, so waiting changes nothing the test then checks).
	probe, err := NewClient(user, Target{Namespace: ns, Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 20*time.Second, "RBAC to take effect", func() (bool, string) {
		_, err := probe.Get(ctx)
		return err == nil, "get as " + sa + ": " + errString(err)
	})
	return user
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
