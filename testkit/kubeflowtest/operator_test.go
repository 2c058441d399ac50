package kubeflowtest_test

// The real kubeflow spark-operator controller on the test control plane (no kubelet: the
// driver Pod stays Pending, which the controller reads as SUBMITTED), submitting through the
// stand-in spark-submit: what it creates from sparkui's template injection, its status, the
// resubmission a changed spec causes, and what deleting the application deletes.

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/testkit/kubeflowtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

var appGVR = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}

// rendered is examples/kubeflow's sparkui output: every object, the SparkApplication last.
func rendered(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile("../../examples/kubeflow/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u, err := testcluster.DecodeYAML(doc)
		if err != nil {
			t.Fatal(err)
		}
		// The ScheduledSparkApplication would start runs of its own every minute.
		if u.GetKind() != "ScheduledSparkApplication" && !strings.HasPrefix(u.GetName(), "nightly-") {
			objs = append(objs, u)
		}
	}
	return objs
}

func apply(t *testing.T, c *testcluster.Cluster, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := testcluster.Context(t, time.Minute)
	for _, o := range objs {
		m, err := c.Mapping(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// states records every application state the API server stores, in order, from a watch.
func states(t *testing.T, d dynamic.Interface, ns, name string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := d.Resource(appGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 256)
	go func() {
		defer close(ch)
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Deleted {
				s, _, _ := unstructured.NestedString(u.Object, "status", "applicationState", "state")
				ch <- s
			}
		}
	}()
	var seen []string
	return func() []string {
		for {
			select {
			case s := <-ch:
				if s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
					seen = append(seen, s)
				}
			default:
				return slices.Clone(seen)
			}
		}
	}
}

func TestOperatorSubmitsResubmitsAndDeletes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{ControllerManager: true, CRDDirectoryPaths: []string{"../../testdata/assets/crds"}})
	const ns, name = "spark-jobs", "spark-pi"
	c.EnsureNamespace(t, ns)
	objs := rendered(t)
	var sa *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "SparkApplication" {
			sa = o
		}
	}
	sa.SetLabels(map[string]string{"team": "data-platform"})
	seen := states(t, c.Dynamic, ns, name)
	op := kubeflowtest.Start(t, c, ns)
	apply(t, c, objs)
	ctx := testcluster.Context(t, 5*time.Minute)

	first := submitted(t, c, op, name, "")
	if got := seen(); !slices.Equal(got, []string{"SUBMITTED"}) {
		t.Errorf("states until the first submission: %v, want [SUBMITTED] (controller.go reconcileNewSparkApplication: New → submitSparkApplication → Submitted)", got)
	}
	oldImage := runtimeImage(t, first.pod)
	if oldImage != version.RuntimeImage() {
		t.Errorf("driver init container sparkui-runtime image %q: the template's was not used", oldImage)
	}

	// A sparkui upgrade: only the runtime image in the driver template changes.
	const upgraded = "ghcr.io/sparkui/sparkui-runtime:contract-1.99"
	app, err := c.Dynamic.Resource(appGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inits, _, _ := unstructured.NestedSlice(app.Object, "spec", "driver", "template", "spec", "initContainers")
	inits[0].(map[string]any)["image"] = upgraded
	if err := unstructured.SetNestedSlice(app.Object, inits, "spec", "driver", "template", "spec", "initContainers"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dynamic.Resource(appGVR).Namespace(ns).Update(ctx, app, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := submitted(t, c, op, name, first.submissionID)
	// event_filter.go EventFilter.Update: a spec change other than suspend/TTL sets
	// INVALIDATING; reconcileInvalidatingSparkApplication deletes the driver Pod and the UI
	// Service (deleteSparkResources) and sets PENDING_RERUN; reconcilePendingRerun, once
	// validateSparkResourceDeletion sees them gone, submits again: SUBMITTED.
	if got, want := seen(), []string{"SUBMITTED", "INVALIDATING", "PENDING_RERUN", "SUBMITTED"}; !slices.Equal(got, want) {
		t.Errorf("states through the resubmission: %v, want %v", got, want)
	}
	if second.pod.UID == first.pod.UID {
		t.Errorf("driver Pod %s kept its UID %s across the resubmission", second.pod.Name, first.pod.UID)
	}
	if img := runtimeImage(t, second.pod); img != upgraded {
		t.Errorf("resubmitted driver's sparkui-runtime image %q, want the new template's", img)
	}
	if _, err := c.Client.CoreV1().Pods(ns).Get(ctx, first.pod.Name, metav1.GetOptions{}); err == nil {
		// Same name: it must be a new Pod, which submitted already checked by UID.
		t.Logf("driver Pod name %s reused by the new run (GetDriverPodName: <app>-driver)", first.pod.Name)
	}
	// resetSparkApplicationStatus (Invalidating) zeroes the attempts; the resubmission counts one.
	if n, _, _ := unstructured.NestedInt64(second.app.Object, "status", "submissionAttempts"); n != 1 {
		t.Errorf("status.submissionAttempts %d after the resubmission, want 1 (reset on INVALIDATING)", n)
	}

	// Deleting the application: v2.5.2 puts no finalizer on it (handleSparkApplicationDeletion
	// runs only while a deletionTimestamp is set, which without a finalizer is never observed),
	// so the garbage collector deletes the driver Pod through the ownerReference the operator
	// put in its template, and the Pod's Service and ConfigMap through spark-submit's.
	if err := c.Dynamic.Resource(appGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 2*time.Minute, "the driver Pod, its Service and ConfigMap deleted with the application", func() (bool, string) {
		var left []string
		if _, err := c.Client.CoreV1().Pods(ns).Get(ctx, second.pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "Pod "+second.pod.Name)
		}
		if _, err := c.Client.CoreV1().Services(ns).Get(ctx, second.driverSvc, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "Service "+second.driverSvc)
		}
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, second.confMap, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "ConfigMap "+second.confMap)
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
}

func runtimeImage(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	for _, c := range pod.Spec.InitContainers {
		if c.Name == sidecar.ContainerName {
			return c.Image
		}
	}
	t.Fatalf("driver Pod %s has no init container %s: %s", pod.Name, sidecar.ContainerName, toYAML(pod))
	return ""
}

func toYAML(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}
