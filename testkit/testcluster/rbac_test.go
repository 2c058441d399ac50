package testcluster

import (
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

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
