package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

// golden reads the function's output for testdata/fixed-port (a spark-submit driver Pod, its
// driver Service and ConfigMap, the UI Service, Role and RoleBinding) as typed objects, the
// way the API server would hold them after `kubectl apply`.
func golden(t *testing.T) (pod *corev1.Pod, objs []runtime.Object) {
	t.Helper()
	b, err := os.ReadFile("../testdata/fixed-port/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rl struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(b, &rl); err != nil {
		t.Fatal(err)
	}
	created := metav1.NewTime(now.Add(-5 * time.Minute))
	for _, it := range rl.Items {
		j, _ := yaml.Marshal(it)
		var o runtime.Object
		switch it["kind"] {
		case "Pod":
			pod = &corev1.Pod{}
			o = pod
		case "Service":
			o = &corev1.Service{}
		case "ConfigMap":
			o = &corev1.ConfigMap{}
		case "Role":
			o = &rbacv1.Role{}
		case "RoleBinding":
			o = &rbacv1.RoleBinding{}
		default:
			t.Fatalf("unexpected %v in the golden", it["kind"])
		}
		if err := yaml.Unmarshal(j, o); err != nil {
			t.Fatal(err)
		}
		o.(metav1.Object).SetCreationTimestamp(created)
		objs = append(objs, o)
	}
	return pod, objs
}

func run(t *testing.T, cs kubernetes.Interface, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root, e := newRoot(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	e.clients = func() (kubernetes.Interface, *rest.Config, error) { return cs, &rest.Config{}, nil }
	e.now = func() time.Time { return now }
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestListAndWhyWithdrawnWithoutRBAC: the golden's application after its run, withdrawn, the
// sidecar terminated with its last reason, the RoleBinding deleted; Events of the runtime and
// of the kubelet regarding the Pod. list and why show exactly the spec's state, the Pod, the
// runtime's Events only, the termination message and SUI007 from the live objects.
func TestListAndWhyWithdrawnWithoutRBAC(t *testing.T) {
	pod, objs := golden(t)
	pod.UID = "uid-1"
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, InitContainerStatuses: []corev1.ContainerStatus{{Name: "sparkui-runtime",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", Message: "patch services forbidden: User \"system:serviceaccount:analytics:spark\"\n"}}}}}
	var kept []runtime.Object
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.RoleBinding:
			continue
		case *corev1.Service:
			if strings.HasSuffix(o.Name, "-ui-svc") {
				o.Spec.Selector = map[string]string{"sparkui.dev/withdrawn": "uid-1"}
				o.Spec.Ports[0].TargetPort = intstr.FromInt32(4041)
				o.Annotations["sparkui.dev/ui-state"] = "withdrawn"
				o.Annotations["sparkui.dev/ui-since"] = now.Add(-time.Minute).Format(time.RFC3339)
				o.Annotations["sparkui.dev/ui-reason"] = "the UI went away"
			}
		}
		kept = append(kept, o)
	}
	ev := func(name, controller, reason, note string, at time.Time) *eventsv1.Event {
		return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "analytics"}, EventTime: metav1.NewMicroTime(at),
			ReportingController: controller, Reason: reason, Note: note, Type: "Warning",
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "analytics", Name: pod.Name, UID: "uid-1"}}
	}
	kept = append(kept,
		ev("e1", "sparkui-runtime", "PatchForbidden", "patch services forbidden", now.Add(-3*time.Minute)),
		ev("e2", "kubelet", "Pulled", "image pulled", now.Add(-4*time.Minute)),
		ev("e3", "sparkui-runtime", "Withdrawn", "no UI to withdraw", now.Add(-time.Minute)))
	cs := fake.NewClientset(kept...)

	out, errOut, err := run(t, cs, "list", "-n", "analytics")
	if err != nil {
		t.Fatal(err)
	}
	want := `NAME                         CARRIER                                 STATE       PORT   LINK   AGE
wordcount-5b2d0c9e1f3a7b64   Pod/wordcount-5b2d0c9e1f3a7b64-driver   withdrawn   -      -      5m
`
	if d := cmp.Diff(want, out); d != "" || errOut != "" {
		t.Errorf("list (-want +got):\n%s\nstderr: %s", d, errOut)
	}

	out, _, err = run(t, cs, "why", "wordcount-5b2d0c9e1f3a7b64", "-n", "analytics")
	if err != nil {
		t.Fatal(err)
	}
	want = `Application:     wordcount-5b2d0c9e1f3a7b64 (namespace analytics)
Carrier:         Pod/wordcount-5b2d0c9e1f3a7b64-driver
UI Service:      wordcount-5b2d0c9e1f3a7b64-ui-svc (ClusterIP, port 4050 spark-ui)
State:           withdrawn (a selector that matches nothing), from the Service's spec
Claims:          withdrawn since 60s ago, agreeing with the spec
Reason:          the UI went away
Link:            -
Driver Pod:      wordcount-5b2d0c9e1f3a7b64-driver (Succeeded, 5m ago; withdrawn by)
Sidecar:         sparkui-runtime terminated Completed, exit code 0, restarts 0
Termination msg: patch services forbidden: User "system:serviceaccount:analytics:spark"

Events (reported by sparkui-runtime, regarding Pod wordcount-5b2d0c9e1f3a7b64-driver):
  LAST SEEN  TYPE     REASON          MESSAGE
  3m ago     Warning  PatchForbidden  patch services forbidden
  60s ago    Warning  Withdrawn       no UI to withdraw

Checks that fail (sparkui's rules on the live objects):
`
	if !strings.HasPrefix(out, want) {
		t.Errorf("why: got\n%s\nwant it to start with\n%s", out, want)
	}
	checks := strings.TrimPrefix(out, want)
	if !strings.Contains(checks, "error [SUI007]") || strings.Count(checks, "\n") < 1 {
		t.Errorf("why's checks: want SUI007 (the RoleBinding is gone), got:\n%s", checks)
	}
	for _, id := range []string{"SUI004", "SUI020", "SUI018", "SUI060"} {
		if strings.Contains(checks, id) {
			t.Errorf("why reports build-time rule %s on live objects:\n%s", id, checks)
		}
	}
	t.Logf("why:\n%s", out)

	// open of a withdrawn application refuses, naming why.
	_, _, err = run(t, cs, "open", "wordcount-5b2d0c9e1f3a7b64", "-n", "analytics")
	if err == nil || !strings.Contains(err.Error(), "withdrawn, not bound") {
		t.Errorf("open of a withdrawn application: %v", err)
	}
}

// TestOpenHandedOffPrintsHistory: a handed-off application has no UI to forward to; open
// prints its History page, and list -o json carries every link.
func TestOpenHandedOffPrintsHistory(t *testing.T) {
	_, objs := golden(t)
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok && strings.HasSuffix(s.Name, "-ui-svc") {
			s.Spec.Selector = map[string]string{"sparkui.dev/history-redirector": "true"}
			s.Spec.Ports[0].TargetPort = intstr.FromInt32(8080)
			s.Annotations["sparkui.dev/history-uri"] = "https://history.example.com/history/spark-1/"
		}
	}
	cs := fake.NewClientset(objs...)
	out, _, err := run(t, cs, "open", "wordcount-5b2d0c9e1f3a7b64", "-n", "analytics")
	if err != nil || out != "https://history.example.com/history/spark-1/\n" {
		t.Errorf("open: %q %v", out, err)
	}
	out, _, err = run(t, cs, "list", "-A", "-o", "json")
	if err != nil || !strings.Contains(out, `"state": "handed-off"`) || !strings.Contains(out, `"history": "https://history.example.com/history/spark-1/"`) {
		t.Errorf("list -o json: %v\n%s", err, out)
	}
}

// TestListAndWhyWaiting: the golden's application whose runtime cannot bind (its UI behind a
// filter without a credential) and says so on the Service (docs/service-status.md): list -o
// wide shows waiting with the reason and since, why the claims agreeing and the reason.
func TestListAndWhyWaiting(t *testing.T) {
	pod, objs := golden(t)
	pod.UID = "uid-1"
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: []corev1.ContainerStatus{{Name: "sparkui-runtime",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	const reason = "port 4050: the UI refuses the runtime's probes; not bound: /api/v1/applications answers 403 Forbidden"
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok && strings.HasSuffix(s.Name, "-ui-svc") {
			s.Annotations["sparkui.dev/ui-state"] = "waiting"
			s.Annotations["sparkui.dev/ui-since"] = now.Add(-2 * time.Minute).Format(time.RFC3339)
			s.Annotations["sparkui.dev/ui-pod"] = pod.Name
			s.Annotations["sparkui.dev/ui-reason"] = reason
		}
	}
	cs := fake.NewClientset(objs...)
	out, errOut, err := run(t, cs, "list", "-n", "analytics", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	want := `NAME                         CARRIER                                 STATE     PORT   LINK   AGE   SERVICE                             POD                                 SINCE   REASON
wordcount-5b2d0c9e1f3a7b64   Pod/wordcount-5b2d0c9e1f3a7b64-driver   waiting   -      -      5m    wordcount-5b2d0c9e1f3a7b64-ui-svc   wordcount-5b2d0c9e1f3a7b64-driver   2m      ` + reason + `
`
	if d := cmp.Diff(want, out); d != "" || errOut != "" {
		t.Errorf("list -o wide (-want +got):\n%s\nstderr: %s", d, errOut)
	}
	out, _, err = run(t, cs, "why", "wordcount-5b2d0c9e1f3a7b64", "-n", "analytics")
	if err != nil {
		t.Fatal(err)
	}
	want = `State:           waiting (no selector: the runtime has not bound it), from the Service's spec
Claims:          waiting since 2m ago, agreeing with the spec
Reason:          ` + reason + `
`
	if !strings.Contains(out, want) {
		t.Errorf("why: got\n%s\nwant it to contain\n%s", out, want)
	}
}
