package binder

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeflowOwner: a Service is the kubeflow operator's when an owner is in its API group
// (whatever the kind), or by its labels; an Apache operator's SparkApplication (same kind,
// another group) or a group that only starts like kubeflow's is not.
func TestKubeflowOwner(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels map[string]string
		owners []metav1.OwnerReference
		want   string
		ok     bool
	}{
		{"kubeflow SparkApplication", nil, []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: "pi"}}, `SparkApplication "pi"`, true},
		{"kubeflow SparkConnect", nil, []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io/v1alpha1", Kind: "SparkConnect", Name: "c"}}, `SparkConnect "c"`, true},
		{"Apache SparkApplication", nil, []metav1.OwnerReference{{APIVersion: "spark.apache.org/v1", Kind: "SparkApplication", Name: "pi"}}, "", false},
		{"look-alike group", nil, []metav1.OwnerReference{{APIVersion: "sparkoperator.k8s.io.example.com/v1", Kind: "SparkApplication", Name: "pi"}}, "", false},
		{"app-name label", map[string]string{"sparkoperator.k8s.io/app-name": "pi"}, nil, `SparkApplication "pi"`, true},
		{"created-by label", map[string]string{"sparkoperator.k8s.io/created-by-spark-operator": "true"}, nil, "", true},
		{"nothing", map[string]string{"app": "x"}, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p"}}, "", false},
	} {
		got, ok := kubeflowOwner(c.labels, c.owners)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: kubeflowOwner = %q, %t; want %q, %t", c.name, got, ok, c.want, c.ok)
		}
	}
}
