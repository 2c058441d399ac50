package nodetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// ended checks the end of run r (its Pod deleted at `at`): with the withdraw hook, the
// Service withdrawn for r's Pod before its UI got SIGTERM (the stand-in's own request in the
// handler); without (noHook), withdrawn within a second of that SIGTERM (the UI closes
// there; the runtime sees it at its next poll); the EndpointSlice empty.
func ended(t *testing.T, n *testnode.Node, tl *uiTimeline, ns, svcName string, r run, noHook bool, at time.Time) {
	t.Helper()
	uid := string(r.pod.UID)
	sig := logLineOf(t, n, ns, r.pod.Name, string(r.pod.UID), r.ctr, regexp.MustCompile(`SIGTERM (\d+)`), 90*time.Second)
	ns64, _ := strconv.ParseInt(sig[1], 10, 64)
	sigterm := time.Unix(0, ns64)
	atSig := logLineOf(t, n, ns, r.pod.Name, string(r.pod.UID), r.ctr, regexp.MustCompile(`service-at-sigterm (.*)`), 30*time.Second)[1]
	var w uiState
	testcluster.WaitFor(t, 30*time.Second, "withdrawn for "+r.pod.Name, func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s uiState) bool { return s.withdrawnFor(uid) })
		return ok, tl.String()
	})
	withdrawn := `{"sparkui.dev/withdrawn":"` + uid + `"}`
	if noHook {
		if atSig == withdrawn {
			t.Errorf("withdrawn before the UI's SIGTERM with no hook in the Pod: what withdrew it?")
		}
		if d := w.At.Sub(sigterm); d > time.Second {
			t.Errorf("withdrawn %s after the UI's SIGTERM (it closed there), want within a second; timeline:%s", d, tl)
		}
		t.Logf("no hook (the operator's lifecycle): at the UI's SIGTERM the Service was %s; withdrawn %s after it", atSig, w.At.Sub(sigterm).Round(time.Millisecond))
	} else if atSig != withdrawn {
		t.Errorf("when the UI of %s got SIGTERM the API server had the Service's selector %s, want the withdrawn %s; timeline:%s", r.pod.Name, atSig, withdrawn, tl)
	}
	t.Logf("end of %s → withdrawn %s, → UI SIGTERM %s", r.pod.Name, w.At.Sub(at).Round(time.Millisecond), sigterm.Sub(at).Round(time.Millisecond))
	ctx := testcluster.Context(t, 2*time.Minute)
	testcluster.WaitFor(t, 30*time.Second, "an empty EndpointSlice", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		return err == nil && len(eps) == 0, strings.Join(eps, " ")
	})
	podGone(t, n, ns, r.pod)
	routedOnlyTo(t, tl, r, w)
}

// finished checks a driver that ends by itself (a Job's run): the UI closes ("finished"),
// the Service is withdrawn within a second (the runtime's poll; nothing can precede the
// application's own end), the native sidecar then gets SIGTERM and exits 0, the Pod
// Succeeded, the Job Complete.
func finished(t *testing.T, n *testnode.Node, tl *uiTimeline, ns, svcName string, r run, carrier *unstructured.Unstructured) {
	t.Helper()
	c := n.Cluster
	ctx := testcluster.Context(t, 3*time.Minute)
	fin := logLineOf(t, n, ns, r.pod.Name, string(r.pod.UID), r.ctr, regexp.MustCompile(`finished (\d+)`), 2*time.Minute)
	ns64, _ := strconv.ParseInt(fin[1], 10, 64)
	end := time.Unix(0, ns64)
	uid := string(r.pod.UID)
	var w uiState
	testcluster.WaitFor(t, 30*time.Second, "withdrawn after the application's end", func() (bool, string) {
		var ok bool
		w, ok = tl.first(func(s uiState) bool { return s.withdrawnFor(uid) })
		return ok, tl.String()
	})
	if d := w.At.Sub(end); d > time.Second {
		t.Errorf("withdrawn %s after the UI closed, want within a second (100 ms poll); timeline:%s", d, tl)
	}
	t.Logf("application end → withdrawn %s", w.At.Sub(end).Round(time.Millisecond))
	testcluster.WaitFor(t, 30*time.Second, "an empty EndpointSlice", func() (bool, string) {
		eps, err := sliceEndpoints(ctx, n, ns, svcName)
		return err == nil && len(eps) == 0, strings.Join(eps, " ")
	})
	job := r.pod.Labels[batchv1.JobNameLabel]
	var p *corev1.Pod
	testcluster.WaitFor(t, 90*time.Second, "the Pod Succeeded", func() (bool, string) {
		var err error
		p, err = c.Client.CoreV1().Pods(ns).Get(ctx, r.pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodSucceeded, podWhy(p)
	})
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			t.Errorf("container %s: %+v, want terminated with exit code 0", cs.Name, cs.State)
		}
	}
	testcluster.WaitFor(t, 60*time.Second, "Job "+job+" Complete", func() (bool, string) {
		j, err := c.Client.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", j.Status)
	})
	t.Logf("application end → Job %s Complete %s", job, time.Since(end).Round(time.Millisecond))
	if carrier.GetKind() == "CronJob" {
		if err := c.Client.BatchV1().CronJobs(ns).Delete(ctx, carrier.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if last := tl.last(); !last.withdrawnFor(uid) {
		t.Errorf("the Service after the run: %s, want withdrawn for %s", last, uid)
	}
	routedOnlyTo(t, tl, r, w)
}

// heldBy asserts the Service is bound to r's Pod now and has been ever since r's bind: no
// earlier Pod's withdrawal undid it.
func heldBy(t *testing.T, tl *uiTimeline, r run, when string) {
	t.Helper()
	uid := string(r.pod.UID)
	for _, s := range tl.snapshot() {
		if s.At.Before(r.bound.At) {
			continue
		}
		if len(s.Selector) == 0 || s.Selector["sparkui.dev/withdrawn"] != "" || s.BoundPod != uid {
			t.Errorf("%s: the Service left %s's binding: %s; timeline:%s", when, r.pod.Name, s, tl)
		}
	}
}

// routedOnlyTo asserts every state of the Service from r's bind until its withdrawal (w,
// the first withdrawn state for r's Pod) selected r's Pod on its UI port with the bound
// selector: nothing else ever received r's traffic. Before r's bind and after its withdrawal
// the states belong to other runs, which check their own interval.
func routedOnlyTo(t *testing.T, tl *uiTimeline, r run, w uiState) {
	t.Helper()
	uid := string(r.pod.UID)
	for _, s := range tl.snapshot() {
		if s.At.Before(r.bound.At) || !s.At.Before(w.At) {
			continue
		}
		if s.Gone || (s.BoundPod != uid && s.Owner != uid) || s.TargetPort != r.uiPort || !equal(s.Selector, r.bound.Selector) {
			t.Errorf("between %s's bind and its withdrawal the Service was: %s; timeline:%s", r.pod.Name, s, tl)
		}
	}
}

func podGone(t *testing.T, n *testnode.Node, ns string, p *corev1.Pod) {
	t.Helper()
	testcluster.WaitFor(t, 90*time.Second, "Pod "+p.Name+" gone", func() (bool, string) {
		got, err := n.Cluster.Client.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && got.UID != p.UID) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, podWhy(got)
	})
}

// volume makes the PersistentVolumeClaim an example expects (a StatefulSet's claim its
// controller creates: only the volume) and a hostPath PersistentVolume reserved for it.
func volume(t *testing.T, n *testnode.Node, ns, claim string) {
	t.Helper()
	c := n.Cluster
	ctx := testcluster.Context(t, time.Minute)
	size := resource.MustParse("10Gi")
	dir := filepath.Join(n.Dir, "volumes", ns+"-"+claim)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
		},
	}
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(claim, "work-lab-") {
		return // the StatefulSet's volumeClaimTemplates
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serviceAccounts creates the ServiceAccounts the driver Pods run as and the RoleBindings
// name (the examples leave them to the user).
func serviceAccounts(t *testing.T, n *testnode.Node, objs []*unstructured.Unstructured, driver *corev1.Pod) {
	t.Helper()
	type key struct{ ns, name string }
	want := map[key]bool{}
	for _, o := range objs {
		if o.GetKind() == "RoleBinding" {
			subj, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subj {
				m := s.(map[string]any)
				if m["kind"] == "ServiceAccount" {
					want[key{o.GetNamespace(), m["name"].(string)}] = true
				}
			}
		}
		if o.GetKind() == "ServiceAccount" {
			delete(want, key{o.GetNamespace(), o.GetName()})
		}
	}
	if driver != nil && driver.Spec.ServiceAccountName != "" {
		want[key{driver.Namespace, driver.Spec.ServiceAccountName}] = true
	}
	for k := range want {
		_, err := n.Cluster.Client.CoreV1().ServiceAccounts(k.ns).Create(testcluster.Context(t, 10*time.Second),
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: k.name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}
