package testcluster

import (
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddRoleRule appends rule to Role role of ns and waits until the API server's authorizer lets
// ServiceAccount sa of ns do the rule's first verb on its first resource: RBAC reads Roles
// from an informer, so a request right after the update can still be refused.
func (c *Cluster) AddRoleRule(t testing.TB, ns, role, sa string, rule rbacv1.PolicyRule) {
	t.Helper()
	ctx := Context(t, 30*time.Second)
	roles := c.Client.RbacV1().Roles(ns)
	r, err := roles.Get(ctx, role, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Rules = append(r.Rules, rule)
	if _, err := roles.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + ns + ":" + sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: rule.Resources[0]},
	}}
	WaitFor(t, 20*time.Second, "the new rule of Role "+ns+"/"+role+" to take effect", func() (bool, string) {
		res, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return res.Status.Allowed, res.Status.Reason
	})
}
