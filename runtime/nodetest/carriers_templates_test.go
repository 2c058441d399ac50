package nodetest

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func templatePath(kind string) []string {
	switch kind {
	case "Deployment", "StatefulSet", "Job":
		return []string{"spec", "template"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template"}
	}
	return nil
}

func templateOf(t *testing.T, o *unstructured.Unstructured) map[string]any {
	p := templatePath(o.GetKind())
	if p == nil {
		return nil
	}
	m, _, err := unstructured.NestedMap(o.Object, p...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func setTemplateSpec(t *testing.T, o *unstructured.Unstructured, spec *corev1.PodSpec) {
	t.Helper()
	if err := unstructured.SetNestedField(o.Object, toMap(t, spec), append(templatePath(o.GetKind()), "spec")...); err != nil {
		t.Fatal(err)
	}
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// driverContainer is the Pod's one main container (every carrier's driver Pod has one).
func driverContainer(t *testing.T, spec *corev1.PodSpec) string {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("driver Pod with %d containers", len(spec.Containers))
	}
	return spec.Containers[0].Name
}

// setEnv sets a test-only variable of the stand-in UI in container ctr: which UI Service its
// SIGTERM handler asks the API server for (FAKESPARK_UI_SERVICE), or when the application
// ends (FAKESPARK_EXIT_AFTER). Spark reads neither.
func setEnv(spec *corev1.PodSpec, ctr, name, value string) {
	for i := range spec.Containers {
		if spec.Containers[i].Name == ctr {
			spec.Containers[i].Env = append(spec.Containers[i].Env, corev1.EnvVar{Name: name, Value: value})
		}
	}
}

func editTemplate(t *testing.T, o *unstructured.Unstructured, f func(spec *corev1.PodSpec)) {
	t.Helper()
	spec := &corev1.PodSpec{}
	fromMap(t, templateOf(t, o)["spec"], spec)
	f(spec)
	setTemplateSpec(t, o, spec)
}

// fitAndFinish: the Job's driver asks 4 CPUs and 8 GiB, more than this 2-CPU node has (the
// scheduler would leave it Pending): its requests go; and its application ends after 6 s, as
// a batch driver does.
func fitAndFinish(t *testing.T, o *unstructured.Unstructured) {
	editTemplate(t, o, func(spec *corev1.PodSpec) {
		spec.Containers[0].Resources = corev1.ResourceRequirements{}
		setEnv(spec, spec.Containers[0].Name, "FAKESPARK_EXIT_AFTER", "6s")
	})
}

// everyMinute: the CronJob's schedule (03:15 daily) becomes every minute, so the controller
// starts a run within a minute; its application ends after 6 s. The test suspends nothing:
// it deletes the CronJob after the first run completes (concurrencyPolicy Forbid keeps a
// second run from overlapping).
func everyMinute(t *testing.T, o *unstructured.Unstructured) {
	if err := unstructured.SetNestedField(o.Object, "* * * * *", "spec", "schedule"); err != nil {
		t.Fatal(err)
	}
	editTemplate(t, o, func(spec *corev1.PodSpec) {
		setEnv(spec, spec.Containers[0].Name, "FAKESPARK_EXIT_AFTER", "6s")
	})
}
