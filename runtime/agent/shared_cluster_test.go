package agent_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// A Service shared by the runs of one carrier, as sparkui-fn emits it for a
// ScheduledSparkApplication "nightly" (docs/operators.md, Names and identity): <name>-sparkui-ui-svc, labelled
// sparkui.dev/application=<name> and no spark-app-selector (the id of a run is not known when
// the manifests are built; kubeflow's is random per run).
const (
	sharedApp     = "nightly"
	sharedService = "nightly-sparkui-ui-svc"
	labelApp      = "sparkui.dev/application"
)

// sharedArgs are the runtime's container args for such a carrier: the guard label, no owner,
// and the run's selector from $(SPARKUI_APP_ID), which the function fills from the downward API
// (metadata.labels['spark-app-selector']).
func sharedArgs(guard string) []string {
	return sidecar.Config{Service: sharedService, UIPort: 0, MaxRetries: 16, HostNetwork: true,
		GuardLabel:       labelApp + "=" + guard,
		PodSelector:      names.LabelAppSelector + "=$(" + sidecar.EnvAppID + ")," + names.LabelSparkRole + "=" + names.RoleDriver,
		NoOwnerReference: true,
	}.Args()
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// kubeletExpand expands $(VAR) in container args as the kubelet does: a variable defined in the
// container's env is replaced by its value (empty included), an undefined one is left as is.
func kubeletExpand(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(ref string) string {
			if v, ok := env[ref[2:len(ref)-1]]; ok {
				return v
			}
			return ref
		})
	}
	return out
}

// sharedRun is one run's driver Pod, its UI and its runtime's configuration.
type sharedRun struct {
	*app
	ui *fakespark.Server
}

// newRun adds run n of the carrier: a driver Pod labelled as the kubeflow operator's Spark
// labels it (a random spark-app-selector per run), on its own IP, and its live UI; and the
// runtime's configuration built from sharedArgs as the kubelet hands them over, with
// SPARKUI_APP_ID from the Pod's label.
func newRun(t *testing.T, base *app, n int) (*sharedRun, agent.Config) {
	t.Helper()
	r := *base
	// Unique across the tests running beside it: under hostNetwork they all probe each
	// other's stand-in UIs, and the id is what tells them apart.
	r.appID = fmt.Sprintf("spark-%s-run%d", r.ns, n)
	r.podIP = nextIP()
	r.pod = r.addPod(t, fmt.Sprintf("nightly-%d-driver", n), r.podIP)
	ui := startUI(t, fakespark.Options{AppID: r.appID, PodName: r.pod.Name, Namespace: r.ns, State: fakespark.Ready})
	env := map[string]string{sidecar.EnvAppID: r.pod.Labels[names.LabelAppSelector]}
	c, err := sidecar.ParseArgs(kubeletExpand(sharedArgs(sharedApp), env))
	if err != nil {
		t.Fatal(err)
	}
	c.AppID = env[sidecar.EnvAppID] // what the runtime reads from $SPARKUI_APP_ID
	cfg := r.config(t)
	cfg.Config = c
	return &sharedRun{app: &r, ui: ui}, cfg
}

// newSharedService creates the shared UI Service, labelled application=owner, with the
// function's Role and RoleBinding (get and patch on that Service only).
func newSharedService(t *testing.T, owner string, typ ...corev1.ServiceType) *app {
	t.Helper()
	c := shared(t)
	ns := c.UniqueNamespace(t)
	a := &app{c: c, ns: ns, service: sharedService}
	ctx := testcluster.Context(t, 30*time.Second)
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		// As sparkui-fn writes it: with Flux's ssa IfNotPresent annotation, so the status
		// annotations go into an existing map in the bind's one PATCH.
		ObjectMeta: metav1.ObjectMeta{Name: sharedService, Namespace: ns, Labels: map[string]string{
			names.LabelManagedBy: names.ManagedByValue, labelApp: owner,
		}, Annotations: map[string]string{names.AnnotationFluxSSA: names.FluxSSAIfNotPresent}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: names.UIPortName, Protocol: corev1.ProtocolTCP, Port: 4040}}},
	}
	if len(typ) > 0 {
		svc.Spec.Type = typ[0]
	}
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.createRBAC(t)
	a.user = saConfig(t, c, ns)
	return a
}

// checkSharedBound: the Service routes run r's UI port, selects r's driver Pod by its run's
// spark-app-selector, records r's Pod as the binder, and has no owner.
func (r *sharedRun) checkSharedBound(t *testing.T) {
	t.Helper()
	svc := r.service_(t)
	want := map[string]string{names.LabelAppSelector: r.appID, names.LabelSparkRole: names.RoleDriver}
	if fmt.Sprint(svc.Spec.Selector) != fmt.Sprint(want) {
		t.Errorf("selector %v, want %v", svc.Spec.Selector, want)
	}
	if got := svc.Spec.Ports[0].TargetPort.IntValue(); got != r.ui.Port {
		t.Errorf("targetPort %d, want %d", got, r.ui.Port)
	}
	if got := svc.Labels[sidecar.LabelBoundPod]; got != string(r.pod.UID) {
		t.Errorf("label %s=%q, want %s", sidecar.LabelBoundPod, got, r.pod.UID)
	}
	if len(svc.OwnerReferences) != 0 {
		t.Errorf("ownerReferences %v on a shared Service", svc.OwnerReferences)
	}
	if svc.Labels[labelApp] != sharedApp || svc.Labels[names.LabelManagedBy] != names.ManagedByValue {
		t.Errorf("labels %v", svc.Labels)
	}
}

// TestSharedServiceRuns: successive runs of a ScheduledSparkApplication share one Service.
// Run 2 takes it over from run 1; run 1's withdrawal (it ends later) leaves run 2 routed; run
// 2's withdrawal empties the slices; deleting both runs' Pods (the history limit) does not
// delete the Service; run 3 binds it again. One PATCH per bind and per withdrawal, no GET.
func TestSharedServiceRuns(t *testing.T) {
	t.Parallel()
	base := newSharedService(t, sharedApp)

	run1, cfg1 := newRun(t, base, 1)
	r1 := start(t, run1.app, cfg1)
	r1.waitBound(t, run1.ui.Port)
	run1.checkSharedBound(t)
	base.waitSliceIP(t, run1.podIP, run1.ui.Port)

	run2, cfg2 := newRun(t, base, 2)
	r2 := start(t, run2.app, cfg2)
	r2.waitBound(t, run2.ui.Port)
	run2.checkSharedBound(t)
	base.waitSliceIP(t, run2.podIP, run2.ui.Port)

	// Run 1 ends after run 2 bound (concurrencyPolicy Allow, or a slow shutdown): its
	// withdrawal is refused by the bound-pod guard, and run 2 stays routed.
	if err := r1.stop(t); err != nil {
		t.Fatalf("run 1 after SIGTERM: %v", err)
	}
	if !strings.Contains(r1.logs.String(), "this Pod does not hold the binding") {
		t.Errorf("run 1 does not say it left the Service alone:\n%s", r1.logs.String())
	}
	run2.checkSharedBound(t)
	time.Sleep(time.Second) // give the endpoint controllers time to act on a change, if any
	base.waitSliceIP(t, run2.podIP, run2.ui.Port)

	if err := r2.stop(t); err != nil {
		t.Fatalf("run 2 after SIGTERM: %v", err)
	}
	svc := base.service_(t)
	if len(svc.Spec.Selector) != 1 || svc.Spec.Selector[names.WithdrawnSelectorKey] != string(run2.pod.UID) {
		t.Errorf("selector after run 2's withdrawal %v, want {%s: %s}", svc.Spec.Selector, names.WithdrawnSelectorKey, run2.pod.UID)
	}
	base.waitSliceEmpty(t)

	// The history limit deletes the finished runs' Pods. A ConfigMap owned by run 2's Pod is
	// the witness that the garbage collector is processing the deletion: once it is gone, a
	// Service owned by those Pods is deleted within moments (checked: with the bind's
	// ownerReference the Service is gone within this window).
	ctx := testcluster.Context(t, 60*time.Second)
	witness := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-witness", Namespace: base.ns, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Pod", Name: run2.pod.Name, UID: run2.pod.UID,
	}}}}
	if _, err := base.c.Client.CoreV1().ConfigMaps(base.ns).Create(ctx, witness, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{run1.pod, run2.pod} {
		if err := base.c.Client.CoreV1().Pods(base.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	testcluster.WaitFor(t, 45*time.Second, "the garbage collector to delete the witness owned by run 2's Pod", func() (bool, string) {
		_, err := base.c.Client.CoreV1().ConfigMaps(base.ns).Get(ctx, witness.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := base.c.Client.CoreV1().Services(base.ns).Get(ctx, sharedService, metav1.GetOptions{}); err != nil {
			t.Fatalf("the shared Service after the runs' Pods were deleted: %v", err)
		}
	}

	run3, cfg3 := newRun(t, base, 3)
	r3 := start(t, run3.app, cfg3)
	r3.waitBound(t, run3.ui.Port)
	run3.checkSharedBound(t)
	base.waitSliceIP(t, run3.podIP, run3.ui.Port)

	// Binds of runs 1, 2, 3 and run 2's withdrawal applied; run 1's withdrawal refused by the
	// guard (422) and not retried; never a read.
	base.waitAudit(t, map[string]int{"patch": 5, "patch 200": 4, "patch 422": 1, "get": 0})
}

// TestSharedServiceOfAnotherApp: a Service labelled for another application is refused by the
// guard (422): nothing is bound, the message names whose it is.
func TestSharedServiceOfAnotherApp(t *testing.T) {
	t.Parallel()
	base := newSharedService(t, "weekly")
	run, cfg := newRun(t, base, 1)
	r := start(t, run.app, cfg)
	msg := r.waitErr(t, "refused")
	for _, want := range []string{labelApp + "=" + sharedApp, `application "weekly" (label ` + labelApp + `=weekly)`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal does not say %q: %s", want, msg)
		}
	}
	if b, _ := os.ReadFile(cfg.TerminationLog); !strings.Contains(string(b), "weekly") {
		t.Errorf("termination log %q", b)
	}
	svc := base.service_(t)
	if len(svc.Spec.Selector) != 0 || len(svc.OwnerReferences) != 0 || svc.Spec.Ports[0].TargetPort.IntValue() != 4040 || svc.Labels[sidecar.LabelBoundPod] != "" {
		t.Errorf("the other application's Service was changed: %v %+v", svc.Labels, svc.Spec)
	}
	counts := base.auditCounts(t)
	if counts["patch 200"] != 0 || counts["patch 422"] == 0 {
		t.Errorf("audit %v: want refused patches only", counts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Withdraw(ctx, "test"); err != nil {
		t.Errorf("withdrawing a Service that is not ours: %v", err)
	}
	if svc := base.service_(t); len(svc.Spec.Selector) != 0 {
		t.Errorf("the other application's Service was withdrawn: %v", svc.Spec.Selector)
	}
}

// TestSharedServiceJobRuns: the runs of a CronJob whose pod template is a client-mode driver.
// The Pods carry no spark-app-selector, so $SPARKUI_APP_ID is defined but empty (the downward
// API gives "" for a missing label) and the runtime matches no id; the run's selector is the
// Job's batch.kubernetes.io/controller-uid (unique per run, set by the Job controller), from
// $(SPARKUI_CONTROLLER_UID). Under hostNetwork each run proves its UI by the driver Pod's name
// in /environment, and never binds the other run's UI. Run 2 takes the Service over; run 1's
// UI goes away (its driver ended) and its withdrawal leaves run 2 routed.
func TestSharedServiceJobRuns(t *testing.T) {
	t.Parallel()
	base := newSharedService(t, sharedApp)
	const uidKey = "batch.kubernetes.io/controller-uid"
	args := sidecar.Config{Service: sharedService, UIPort: 0, MaxRetries: 16, HostNetwork: true,
		GuardLabel:       labelApp + "=" + sharedApp,
		PodSelector:      uidKey + "=$(SPARKUI_CONTROLLER_UID)," + labelApp + "=" + sharedApp + "," + names.LabelSparkRole + "=" + names.RoleDriver,
		NoOwnerReference: true,
	}.Args()
	type jobRun struct {
		run  *sharedRun
		r    *running
		want map[string]string
	}
	startRun := func(n int) jobRun {
		r := *base
		r.appID = "" // what $SPARKUI_APP_ID reads on a Pod without spark-app-selector
		r.podIP = nextIP()
		jobUID := fmt.Sprintf("5f0c%04d-0000-4000-8000-%s", n, strings.Repeat("0", 12))
		labels := map[string]string{uidKey: jobUID, "batch.kubernetes.io/job-name": fmt.Sprintf("nightly-2946%04d", n),
			labelApp: sharedApp, names.LabelSparkRole: names.RoleDriver}
		r.pod = r.addPodLabels(t, fmt.Sprintf("nightly-2946%04d-x7k2p", n), r.podIP, labels)
		// Client mode: Spark's id is spark-application-<millis>; the pod name property is set
		// (spark.kubernetes.driver.pod.name, which the driver needs in client mode on Kubernetes).
		ui := startUI(t, fakespark.Options{AppID: fmt.Sprintf("spark-application-176722560000%d", n), PodName: r.pod.Name, Namespace: r.ns, State: fakespark.Ready})
		env := map[string]string{sidecar.EnvAppID: "", "SPARKUI_CONTROLLER_UID": jobUID}
		c, err := sidecar.ParseArgs(kubeletExpand(args, env))
		if err != nil {
			t.Fatal(err)
		}
		c.AppID = env[sidecar.EnvAppID]
		cfg := r.config(t)
		cfg.Config = c
		run := &sharedRun{app: &r, ui: ui}
		return jobRun{run: run, r: start(t, run.app, cfg), want: map[string]string{uidKey: jobUID, labelApp: sharedApp, names.LabelSparkRole: names.RoleDriver}}
	}
	checkBound := func(j jobRun) {
		t.Helper()
		svc := base.service_(t)
		if fmt.Sprint(svc.Spec.Selector) != fmt.Sprint(j.want) || svc.Spec.Ports[0].TargetPort.IntValue() != j.run.ui.Port ||
			svc.Labels[sidecar.LabelBoundPod] != string(j.run.pod.UID) || len(svc.OwnerReferences) != 0 {
			t.Errorf("Service %v %v %v, want selector %v, targetPort %d, bound-pod %s, no owner",
				svc.Labels, svc.Spec.Selector, svc.OwnerReferences, j.want, j.run.ui.Port, j.run.pod.UID)
		}
	}

	j1 := startRun(1)
	j1.r.waitBound(t, j1.run.ui.Port)
	checkBound(j1)
	base.waitSliceIP(t, j1.run.podIP, j1.run.ui.Port)

	j2 := startRun(2)
	j2.r.waitBound(t, j2.run.ui.Port)
	checkBound(j2)
	base.waitSliceIP(t, j2.run.podIP, j2.run.ui.Port)
	// Neither run ever bound the other's UI (each saw it: hostNetwork, random port).
	for _, j := range []jobRun{j1, j2} {
		if logs := j.r.logs.String(); strings.Count(logs, `msg="UI Service bound"`) != 1 {
			t.Errorf("run %s bound more than once:\n%s", j.run.pod.Name, logs)
		}
	}

	j1.run.ui.Close() // run 1's driver ends
	j1.r.waitWithdrawn(t)
	if !strings.Contains(j1.r.logs.String(), "this Pod does not hold the binding") {
		t.Errorf("run 1 does not say it left the Service alone:\n%s", j1.r.logs.String())
	}
	checkBound(j2)
	time.Sleep(time.Second)
	base.waitSliceIP(t, j2.run.podIP, j2.run.ui.Port)
	base.waitAudit(t, map[string]int{"patch": 3, "patch 200": 2, "patch 422": 1, "get": 0})
}

// TestSharedServiceNodePortURI: the external URI of a shared NodePort Service follows the run
// that holds it. Each run publishes its own node's address (the publication is guarded by the
// bound-pod label and the run's selector); run 1's withdrawal, after run 2 took over, is
// refused (with the URI removal, then plain: two 422s, no read) and leaves run 2's URI; run
// 2's withdrawal removes it.
func TestSharedServiceNodePortURI(t *testing.T) {
	t.Parallel()
	base := newSharedService(t, sharedApp, corev1.ServiceTypeNodePort)
	nodePort := base.service_(t).Spec.Ports[0].NodePort
	startURIRun := func(n int, host string) (*sharedRun, *running) {
		run, cfg := newRun(t, base, n)
		cfg.ExternalURI = string(sidecar.ExternalURINodePort)
		cfg.Getenv = func(k string) string {
			if k == sidecar.EnvHostIP {
				return host
			}
			return ""
		}
		return run, start(t, run.app, cfg)
	}
	run1, r1 := startURIRun(1, "192.0.2.11")
	want1 := fmt.Sprintf("http://192.0.2.11:%d", nodePort)
	r1.waitURI(t, want1)
	if got, _ := base.resolved(t); got != want1 {
		t.Fatalf("annotation %q, want %q", got, want1)
	}
	run1.checkSharedBound(t)

	run2, r2 := startURIRun(2, "192.0.2.12")
	want2 := fmt.Sprintf("http://192.0.2.12:%d", nodePort)
	r2.waitURI(t, want2)
	run2.checkSharedBound(t)

	if err := r1.stop(t); err != nil {
		t.Fatalf("run 1 after SIGTERM: %v", err)
	}
	if got, _ := base.resolved(t); got != want2 {
		t.Errorf("after run 1's withdrawal the annotation is %q, want run 2's %q", got, want2)
	}
	run2.checkSharedBound(t)

	if err := r2.stop(t); err != nil {
		t.Fatalf("run 2 after SIGTERM: %v", err)
	}
	if got, ok := base.resolved(t); ok {
		t.Errorf("annotation %q left after run 2's withdrawal", got)
	}
	base.waitAudit(t, map[string]int{"patch": 7, "patch 200": 5, "patch 422": 2, "get": 0})
}
