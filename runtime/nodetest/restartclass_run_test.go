package nodetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/kubeflowtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// ssa applies o as a pipeline does (kubectl apply --server-side --force-conflicts, Flux).
func ssa(t *testing.T, n *testnode.Node, o *unstructured.Unstructured) error {
	t.Helper()
	m, err := n.Cluster.Mapping(o)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.Cluster.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Patch(testcluster.Context(t, 30*time.Second),
		o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "pipeline", Force: ptr.To(true)})
	return err
}

// nodeEdit makes the test-only changes to a carrier, the same in both renderings: the stand-in
// UI's FAKESPARK_UI_SERVICE; a Job's driver fitted to the node; the schedules of a CronJob and
// a ScheduledSparkApplication brought within the test, their run ending by itself after 25 s.
func nodeEdit(t *testing.T, o *unstructured.Unstructured, svc string) {
	t.Helper()
	ends := corev1.EnvVar{Name: "FAKESPARK_EXIT_AFTER", Value: "25s"}
	switch o.GetKind() {
	case "SparkApplication", "SparkConnect":
		kubeflowEdit(t, o, svc)
	case "ScheduledSparkApplication":
		kubeflowEdit(t, o, svc, ends)
	case "Pod":
		spec := &corev1.PodSpec{}
		fromMap(t, o.Object["spec"], spec)
		setEnv(spec, driverContainer(t, spec), "FAKESPARK_UI_SERVICE", svc)
		o.Object["spec"] = toMap(t, spec)
	default:
		if o.GetKind() == "CronJob" {
			if err := unstructured.SetNestedField(o.Object, "* * * * *", "spec", "schedule"); err != nil {
				t.Fatal(err)
			}
		}
		editTemplate(t, o, func(spec *corev1.PodSpec) {
			setEnv(spec, spec.Containers[0].Name, "FAKESPARK_UI_SERVICE", svc)
			switch o.GetKind() {
			case "Job":
				spec.Containers[0].Resources = corev1.ResourceRequirements{}
			case "CronJob":
				setEnv(spec, spec.Containers[0].Name, ends.Name, ends.Value)
			}
		})
	}
}

func changeRun(t *testing.T, n *testnode.Node, op *kubeflowtest.Operator, row changeRow) {
	c := n.Cluster
	ctx := testcluster.Context(t, 8*time.Minute)
	old, _, oldC, newC, f := renderings(t, row)
	ns := oldC.GetNamespace()
	n.PrepareNamespace(t, ns)
	if row.noController {
		for _, o := range old {
			if err := ssa(t, n, o); err != nil {
				t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		if err := ssa(t, n, newC); err != nil {
			t.Fatalf("the API server refused the change (%v), the report said %s", err, f.Rule)
		}
		m, _ := c.Mapping(newC)
		got, err := c.Dynamic.Resource(m.Resource).Namespace(ns).Get(ctx, newC.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(got.Object["spec"]); !strings.Contains(string(b), RuntimeImage2) {
			t.Errorf("the stored %s does not hold the new runtime image: %s", row.kind, b)
		}
		t.Logf("node: the API server took the change; no %s operator runs here, so what it does with it (%s) is not shown", row.name, f.Rule)
		deleteObject(t, n, newC)
		return
	}
	var svcName string
	for _, o := range old {
		if o.GetKind() == "Service" && o.GetNamespace() == ns && strings.HasSuffix(o.GetName(), "-ui-svc") {
			svcName = o.GetName()
		}
	}
	tl := watchUI(t, n, ns, svcName)
	for _, claim := range row.claims {
		volume(t, n, ns, claim)
	}
	nodeEdit(t, oldC, svcName)
	nodeEdit(t, newC, svcName)
	serviceAccounts(t, n, old, nil)
	for _, o := range old {
		if err := ssa(t, n, o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	sel := "label:sparkui.dev/application=" + oldC.GetName()
	if row.kind == "Pod" {
		sel = "metadata.name=" + oldC.GetName()
	}
	first := awaitRun(t, n, tl, ns, svcName, sel, nil)
	kubeflow := strings.Contains(oldC.GetAPIVersion(), "sparkoperator.k8s.io")
	var appStates func() []string
	if kubeflow {
		operatorMade(t, n, oldC, first, false)
		if row.kind != "SparkConnect" {
			appStates = watchAppStates(t, n, sparkApp(t, n, oldC, first.pod))
		}
	}
	reconciled := reconciles(op, oldC.GetName())
	applied := time.Now()
	err := ssa(t, n, newC)
	switch f.Rule {
	case "SUI072":
		if err != nil {
			t.Fatalf("the API server refused the change: %v", err)
		}
		neverApplied(t, n, op, tl, svcName, newC, first, sel, reconciled, applied)
	case "SUI070":
		refused(t, n, tl, first, err, f)
	case "SUI071":
		if err != nil {
			t.Fatalf("the API server refused the change: %v", err)
		}
		if row.kind == "Pod" {
			sidecarRestarted(t, n, tl, first, applied)
			break
		}
		ended(t, n, tl, ns, svcName, first, false, applied)
		second := awaitRun(t, n, tl, ns, svcName, sel, first.pod)
		if img := runtimeImageOf(t, second.pod); img != RuntimeImage2 {
			t.Errorf("the new driver %s runs the runtime %s, want %s", second.pod.Name, img, RuntimeImage2)
		}
		heldBy(t, tl, second, "after the change")
		t.Logf("node: change → old driver %s withdrawn and gone, new driver %s bound %s later", first.pod.Name, second.pod.Name, second.bound.At.Sub(applied).Round(time.Millisecond))
		if kubeflow {
			operatorMade(t, n, oldC, second, false)
			got := appStates()
			if !subsequence(got, "RUNNING", "INVALIDATING", "PENDING_RERUN", "SUBMITTED", "RUNNING") {
				t.Errorf("the application's states %v, want RUNNING then INVALIDATING, PENDING_RERUN, SUBMITTED, RUNNING", got)
			}
			t.Logf("operator: states %v", got)
		}
	case "SUI073":
		if err != nil {
			t.Fatalf("the API server refused the change: %v", err)
		}
		endsByItself(t, n, tl, first)
		if kubeflow {
			// the operator reads the driver's end at its next reconcile
			testcluster.WaitFor(t, time.Minute, "the running run COMPLETED", func() (bool, string) {
				return subsequence(appStates(), "COMPLETED"), fmt.Sprint(appStates())
			})
			if got := appStates(); subsequence(got, "INVALIDATING") || !subsequence(got, "COMPLETED") {
				t.Errorf("the running run's states %v: want it COMPLETED, never INVALIDATING", got)
			} else {
				t.Logf("operator: the running run's states %v", got)
			}
		}
		second := awaitRun(t, n, tl, ns, svcName, sel, first.pod)
		if img := runtimeImageOf(t, second.pod); img != RuntimeImage2 {
			t.Errorf("the next run's driver %s runs the runtime %s, want %s", second.pod.Name, img, RuntimeImage2)
		}
		t.Logf("node: the running driver %s ended by itself with %s; the next run %s has %s, bound %s after the change",
			first.pod.Name, RuntimeImage, second.pod.Name, RuntimeImage2, second.bound.At.Sub(applied).Round(time.Millisecond))
	default:
		t.Fatalf("no node check for %s", f.Rule)
	}
	t.Logf("timeline:%s", tl)
	deleteObject(t, n, newC)
	testcluster.WaitFor(t, 2*time.Minute, "the row's Pods gone", func() (bool, string) {
		opts := metav1.ListOptions{}
		if v, ok := strings.CutPrefix(sel, "label:"); ok {
			opts.LabelSelector = v
		} else {
			opts.FieldSelector = sel
		}
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d left", len(l.Items))
	})
	if row.kind == "Pod" {
		testcluster.WaitFor(t, time.Minute, "the UI Service collected with the Pod", func() (bool, string) {
			_, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			return apierrors.IsNotFound(err), ""
		})
	}
}

func subsequence(got []string, want ...string) bool {
	i := 0
	for _, s := range got {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want)
}

func runtimeImageOf(t *testing.T, p *corev1.Pod) string {
	t.Helper()
	for _, c := range p.Spec.InitContainers {
		if c.Name == sidecar.ContainerName {
			return c.Image
		}
	}
	t.Fatalf("Pod %s has no %s", p.Name, sidecar.ContainerName)
	return ""
}
