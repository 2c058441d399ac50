package nodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/operatortest"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// carrierImages are the Spark images the carriers' manifests name (as the CRI plugin
// normalises them); each is the stand-in UI, with the paths the manifests run.
var carrierImages = []string{
	"docker.io/apache/spark:3.5.3",                 // spark-submit
	"docker.io/library/spark:3.5.5-python3",        // kubeflow (examples/kubeflow)
	"docker.io/library/spark:3.5.5",                // kubeflow webhook route
	"docker.io/apache/spark:4.0.1-scala",           // Apache operator
	"docker.io/apache/spark:4.0.1",                 // SparkConnect, the Connect Deployment
	"docker.io/apache/spark:3.5.5",                 // Job, CronJob
	"quay.io/jupyter/pyspark-notebook:spark-3.5.3", // the notebook StatefulSet
}

// standInPaths are where the manifests' commands find Spark in its image (apache/spark's
// Dockerfile: SPARK_HOME=/opt/spark).
var standInPaths = []string{"/opt/spark/bin/spark-submit", "/opt/spark/sbin/start-connect-server.sh",
	"/opt/spark/sbin/stop-connect-server.sh", "/bin/bash"}

// workloadControllers are the kube-controller-manager controllers that build the workload
// carriers' Pods, and the PersistentVolume binder for the claims the examples mount.
var workloadControllers = []string{"deployment-controller", "replicaset-controller", "statefulset-controller",
	"job-controller", "cronjob-controller", "persistentvolume-binder-controller"}

func startCarrierNode(t *testing.T) *testnode.Node {
	t.Helper()
	rt, err := testnode.BuildGo("./runtime")
	if err != nil {
		t.Fatal(err)
	}
	ui, err := testnode.BuildGo("./runtime/internal/fakespark/cmd/fakespark-ui")
	if err != nil {
		t.Fatal(err)
	}
	imgs := []testnode.Image{{Ref: RuntimeImage, Name: "sparkui-runtime", Binary: rt}}
	for _, ref := range carrierImages {
		imgs = append(imgs, testnode.Image{Ref: ref, Name: "fakespark-ui", Binary: ui, Paths: standInPaths, Env: []string{"SPARK_HOME=/opt/spark"}})
	}
	// Stackable's product image keeps Spark under /stackable/spark (the operator runs
	// /stackable/spark/bin/spark-submit: stackabletech/spark-k8s-operator
	// rust/operator-binary/src/crd/mod.rs build_command); its driver, like every operator's, is
	// started by the image's entrypoint with Spark's `driver --properties-file …` arguments.
	imgs = append(imgs, testnode.Image{Ref: operatortest.StackableImage("3.5.6"), Name: "fakespark-ui", Binary: ui,
		Paths: []string{"/stackable/spark/bin/spark-submit"}, Env: []string{"SPARK_HOME=/stackable/spark"}})
	return testnode.Start(t, testnode.Options{Images: imgs, Controllers: workloadControllers})
}

// renderFiles runs the built function on the resources of files (paths from the repository
// root; a ResourceList's items, or YAML documents) with a SparkUIService whose spec is spec
// and whose runtime image is RuntimeImage.
func renderFiles(t *testing.T, spec string, files ...string) []*unstructured.Unstructured {
	t.Helper()
	fn, err := testnode.BuildGo("./fn")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sparkui-fn")
	if err := os.WriteFile(bin, fn, 0o755); err != nil {
		t.Fatal(err)
	}
	var items []any
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m["kind"] == "ResourceList" {
				items = append(items, m["items"].([]any)...)
			} else if len(m) > 0 {
				items = append(items, m)
			}
		}
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(spec), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(cfg, RuntimeImage, "runtime", "image"); err != nil {
		t.Fatal(err)
	}
	rl := map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
		"functionConfig": map[string]any{"apiVersion": "sparkui.dev/v1alpha1", "kind": "SparkUIService",
			"metadata": map[string]any{"name": "sparkui"}, "spec": cfg}}
	in, err := json.Marshal(rl)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sparkui-fn on %v: %v\n%s\n%s", files, err, stderr.String(), stdout.String())
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, it := range out["items"].([]any) {
		objs = append(objs, &unstructured.Unstructured{Object: it.(map[string]any)})
	}
	return objs
}

// ending is how a row's driver run ends.
type ending int

const (
	deletePod  ending = iota // the Pod deleted (an operator's application deleted, spark-submit's Pod)
	recreate                 // Deployment: `kubectl rollout restart` under strategy Recreate, then the Deployment deleted
	restartPod               // StatefulSet: its Pod deleted and recreated by the controller, then the StatefulSet deleted
	completes                // Job, CronJob: the application ends by itself; the Job completes
)

// carrierRow is one carrier on the node: the function's output for an example or fixture,
// the driver Pod made as its operator or controller makes it, and how the run ends.
type carrierRow struct {
	name   string
	files  []string
	config string // the SparkUIService spec beside runtime.image
	kind   string // the carrier's kind in the output
	// build makes the driver Pod an operator would (nil: a workload, created as output and
	// built by its controller in kube-controller-manager; or a Pod in the output).
	build func(t *testing.T, carrier *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap)
	// edit makes test-only changes to the workload (nil: none), each explained where made.
	edit func(t *testing.T, carrier *unstructured.Unstructured)
	// claims are PersistentVolumeClaims the example expects to exist (the user's), created with a
	// hostPath PersistentVolume each.
	claims []string
	end    ending
	// noHook: the operator replaces the driver container's lifecycle (SparkConnect): no
	// withdraw hook, the runtime withdraws within a poll of the UI's closing.
	noHook bool
	// owned: the runtime owns the Service (spark-submit): the garbage collector deletes it with
	// the Pod. Otherwise the Service outlives every run.
	owned bool
}

// carrierRows: every carrier sparkui supports (docs/operators.md). A new carrier is a row.
var carrierRows = []carrierRow{
	{name: "spark-submit Pod", files: []string{"examples/spark-submit/manifests.yaml"}, kind: "Pod", end: deletePod, owned: true},
	{name: "kubeflow SparkApplication (template)", files: []string{"examples/kubeflow/spark-pi.yaml"}, config: "service: {type: ClusterIP}",
		kind: "SparkApplication", end: deletePod,
		build: func(t *testing.T, c *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap) {
			return kubeflowDriver(t, c, false)
		}},
	{name: "kubeflow ScheduledSparkApplication", files: []string{"examples/kubeflow/nightly-pi.yaml"}, config: "service: {type: ClusterIP}",
		kind: "ScheduledSparkApplication", end: deletePod,
		build: func(t *testing.T, c *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap) {
			return kubeflowDriver(t, c, false)
		}},
	{name: "kubeflow SparkApplication (webhook)", files: []string{"examples/kubeflow-webhook/spark-etl.yaml"}, config: "kubeflow: {injection: webhook}",
		kind: "SparkApplication", end: deletePod, claims: []string{"spark-events"},
		build: func(t *testing.T, c *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap) {
			return kubeflowDriver(t, c, true)
		}},
	{name: "Apache SparkApplication", files: []string{"examples/apache-operator/word-count.yaml"},
		kind: "SparkApplication", end: deletePod, claims: []string{"word-count-corpus"}, build: apacheDriver},
	{name: "stackable SparkApplication", files: []string{"testdata/carrier-stackable/input.yaml"},
		kind: "SparkApplication", end: deletePod, build: stackableDriver},
	{name: "kubeflow SparkConnect", files: []string{"testdata/carrier-kubeflow-sparkconnect/input.yaml"},
		kind: "SparkConnect", end: deletePod, noHook: true, build: connectServer},
	{name: "Deployment (Recreate)", files: []string{"examples/workloads/connect-server.yaml"}, config: "service: {type: ClusterIP}",
		kind: "Deployment", end: recreate},
	{name: "StatefulSet", files: []string{"examples/workloads/notebook.yaml"}, config: "service: {type: ClusterIP}",
		kind: "StatefulSet", end: restartPod, claims: []string{"work-lab-0"}},
	{name: "Job", files: []string{"examples/workloads/report-job.yaml"}, config: "service: {type: ClusterIP}",
		kind: "Job", end: completes, edit: fitAndFinish},
	{name: "CronJob", files: []string{"examples/workloads/report-cronjob.yaml"}, config: "service: {type: ClusterIP}",
		kind: "CronJob", end: completes, edit: everyMinute},
}

// TestCarriersOnNode runs every carrier's driver on one real node, one after another (each
// driver asks a CPU of a 2-CPU node): the function's output for the carrier's example, the
// driver Pod as its operator builds it (docs/operators.md; operators_test.go) or as its
// controller in kube-controller-manager builds it from the output, with the runtime image and
// the stand-in Spark UI. For each, on the UI Service's timeline watched from before it exists:
//   - bound: targetPort = the port the UI really bound, the selector picks exactly this run's
//     Pod, the EndpointSlice = that Pod's IP and port, Ready; GET through the ClusterIP and
//     front port (kube-proxy) answers as this application;
//   - the end of the run (per row): withdrawn (sparkui.dev/withdrawn: <Pod UID>) before the
//     UI container gets SIGTERM — proved by the stand-in's own request in its SIGTERM handler
//     — or, where nothing can precede the UI's end (it ends by itself, or the operator owns the
//     lifecycle), within a poll of it; an empty EndpointSlice;
//   - from each run's bind to its withdrawal, no state but that run's binding; the Service
//     outlives every run (the runtime's ownerReference collects it with a spark-submit Pod).
func TestCarriersOnNode(t *testing.T) {
	n := startCarrierNode(t)
	started := time.Now()
	for _, row := range carrierRows {
		t.Run(row.name, func(t *testing.T) {
			rowStart := time.Now()
			runRow(t, n, row)
			t.Logf("%s: %s", row.name, time.Since(rowStart).Round(100*time.Millisecond))
		})
	}
	t.Logf("all carriers: %s on one node", time.Since(started).Round(time.Second))
}

// uiState is the UI Service at one instant, with the Pod holding the binding.
type uiState struct {
	At         time.Time
	Selector   map[string]string
	TargetPort string
	BoundPod   string // sparkui.dev/bound-pod
	Owner      string // the ownerReference's UID (spark-submit)
	Gone       bool
}

func (s uiState) String() string {
	if s.Gone {
		return s.At.Format("15:04:05.000") + " deleted"
	}
	return fmt.Sprintf("%s selector=%v targetPort=%s bound-pod=%s owner=%s", s.At.Format("15:04:05.000"), s.Selector, s.TargetPort, s.BoundPod, s.Owner)
}

func (s uiState) withdrawnFor(uid string) bool {
	return len(s.Selector) == 1 && s.Selector["sparkui.dev/withdrawn"] == uid
}

type uiTimeline struct {
	mu     sync.Mutex
	states []uiState
}

func watchUI(t *testing.T, n *testnode.Node, ns, name string) *uiTimeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := n.Cluster.Client.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tl := &uiTimeline{}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			svc, ok := ev.Object.(*corev1.Service)
			if !ok {
				continue
			}
			st := uiState{At: now, Selector: svc.Spec.Selector, Gone: ev.Type == watch.Deleted, BoundPod: svc.Labels[sidecar.LabelBoundPod]}
			if len(svc.Spec.Ports) > 0 {
				st.TargetPort = svc.Spec.Ports[0].TargetPort.String()
			}
			if len(svc.OwnerReferences) > 0 {
				st.Owner = string(svc.OwnerReferences[0].UID)
			}
			tl.mu.Lock()
			tl.states = append(tl.states, st)
			tl.mu.Unlock()
		}
	}()
	t.Cleanup(cancel)
	return tl
}

func (tl *uiTimeline) snapshot() []uiState {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]uiState(nil), tl.states...)
}

func (tl *uiTimeline) first(ok func(uiState) bool) (uiState, bool) {
	for _, s := range tl.snapshot() {
		if ok(s) {
			return s, true
		}
	}
	return uiState{}, false
}

func (tl *uiTimeline) last() uiState {
	s := tl.snapshot()
	if len(s) == 0 {
		return uiState{}
	}
	return s[len(s)-1]
}

func (tl *uiTimeline) String() string {
	var b strings.Builder
	for _, s := range tl.snapshot() {
		b.WriteString("\n  " + s.String())
	}
	return b.String()
}

// run is one driver run on the node.
type run struct {
	pod    *corev1.Pod
	ctr    string // the driver container
	uiPort string
	appID  string
	bound  uiState
}

func runRow(t *testing.T, n *testnode.Node, row carrierRow) {
	c := n.Cluster
	ctx := testcluster.Context(t, 6*time.Minute)
	objs := renderFiles(t, row.config, row.files...)
	var carrier *unstructured.Unstructured
	var svcName string
	for _, o := range objs {
		if o.GetKind() == row.kind && carrier == nil {
			carrier = o
		}
	}
	if carrier == nil {
		t.Fatalf("no %s in the function's output", row.kind)
	}
	ns := carrier.GetNamespace()
	for _, o := range objs {
		if o.GetKind() == "Service" && o.GetNamespace() == ns && (strings.HasSuffix(o.GetName(), "-sparkui-ui-svc") ||
			(row.kind == "Pod" && strings.HasSuffix(o.GetName(), "-ui-svc"))) {
			svcName = o.GetName()
		}
	}
	if svcName == "" {
		t.Fatalf("no UI Service in the function's output")
	}
	n.PrepareNamespace(t, ns)
	tl := watchUI(t, n, ns, svcName)
	for _, claim := range row.claims {
		volume(t, n, ns, claim)
	}

	// What the pipeline applies: the function's output, but the operator's custom resource
	// (no operator runs here: the test builds its driver Pod below).
	var driver *corev1.Pod
	var extra *corev1.ConfigMap
	var apply []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o == carrier && row.build != nil:
			driver, extra = row.build(t, o)
			setEnv(&driver.Spec, driverContainer(t, &driver.Spec), "FAKESPARK_UI_SERVICE", svcName)
		case o == carrier && row.kind != "Pod":
			if row.edit != nil {
				row.edit(t, o)
			}
			tmpl := templateOf(t, o)
			spec := &corev1.PodSpec{}
			fromMap(t, tmpl["spec"], spec)
			setEnv(spec, driverContainer(t, spec), "FAKESPARK_UI_SERVICE", svcName)
			setTemplateSpec(t, o, spec)
			apply = append(apply, o)
		case o.GetKind() == "Pod":
			spec := &corev1.PodSpec{}
			fromMap(t, o.Object["spec"], spec)
			setEnv(spec, driverContainer(t, spec), "FAKESPARK_UI_SERVICE", svcName)
			o.Object["spec"] = toMap(t, spec)
			apply = append(apply, o)
		default:
			apply = append(apply, o)
		}
	}
	serviceAccounts(t, n, apply, driver)
	applied := time.Now()
	create(t, n, apply)
	if driver != nil {
		if pc := driver.Spec.PriorityClassName; pc != "" {
			_, err := c.Client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc}, Value: 100}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, extra, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, driver, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the driver Pod as the operator builds it: %v", err)
		}
	}
	first := awaitRun(t, n, tl, ns, svcName, runSelector(row, carrier, driver), nil)
	runs := []run{first}
	t.Logf("apply → bound %s (Pod %s, UI port %s, app %s)", first.bound.At.Sub(applied).Round(time.Millisecond), first.pod.Name, first.uiPort, first.appID)

	switch row.end {
	case deletePod:
		deleted := time.Now()
		if err := c.Client.CoreV1().Pods(ns).Delete(ctx, first.pod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ended(t, n, tl, ns, svcName, first, row.noHook, deleted)
	case recreate:
		// kubectl rollout restart: a template annotation, a new ReplicaSet; Recreate stops the
		// old Pod before the new one is created.
		restarted := time.Now()
		patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, restarted.Format(time.RFC3339))
		if _, err := c.Client.AppsV1().Deployments(ns).Patch(ctx, carrier.GetName(), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ended(t, n, tl, ns, svcName, first, false, restarted)
		second := awaitRun(t, n, tl, ns, svcName, runSelector(row, carrier, nil), first.pod)
		runs = append(runs, second)
		t.Logf("rollout → the new Pod bound %s", second.bound.At.Sub(restarted).Round(time.Millisecond))
		heldBy(t, tl, second, "after the old Pod's end")
		deleted := time.Now()
		if err := c.Client.AppsV1().Deployments(ns).Delete(ctx, carrier.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ended(t, n, tl, ns, svcName, second, false, deleted)
	case restartPod:
		deleted := time.Now()
		if err := c.Client.CoreV1().Pods(ns).Delete(ctx, first.pod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ended(t, n, tl, ns, svcName, first, false, deleted)
		second := awaitRun(t, n, tl, ns, svcName, runSelector(row, carrier, nil), first.pod)
		runs = append(runs, second)
		if second.pod.Name != first.pod.Name {
			t.Errorf("the StatefulSet's new Pod is %s, want %s again", second.pod.Name, first.pod.Name)
		}
		t.Logf("Pod deleted → the new %s bound %s", second.pod.Name, second.bound.At.Sub(deleted).Round(time.Millisecond))
		heldBy(t, tl, second, "after the old Pod's end")
		deleted = time.Now()
		if err := c.Client.AppsV1().StatefulSets(ns).Delete(ctx, carrier.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ended(t, n, tl, ns, svcName, second, false, deleted)
	case completes:
		finished(t, n, tl, ns, svcName, first, carrier)
	}

	// Every state ever seen: not bound yet, withdrawn, deleted, or one run's own binding.
	for _, s := range tl.snapshot() {
		ok := s.Gone || len(s.Selector) == 0 || s.Selector["sparkui.dev/withdrawn"] != ""
		for _, r := range runs {
			uid := string(r.pod.UID)
			ok = ok || ((s.BoundPod == uid || s.Owner == uid) && s.TargetPort == r.uiPort && equal(s.Selector, r.bound.Selector))
		}
		if !ok {
			t.Errorf("the Service routed to no run's UI: %s", s)
		}
	}

	// The Service: gone with the Pod when the runtime owns it, else outliving the run,
	// withdrawn.
	if row.owned {
		testcluster.WaitFor(t, 90*time.Second, "the UI Service collected with the Pod", func() (bool, string) {
			_, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			return apierrors.IsNotFound(err), tl.String()
		})
	} else {
		svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the UI Service must outlive the run: %v", err)
		}
		if len(svc.OwnerReferences) != 0 {
			t.Errorf("the shared UI Service has an owner: %v", svc.OwnerReferences)
		}
	}
	t.Logf("timeline:%s", tl)
}

// runSelector returns a function listing the candidate driver Pods of the row.
func runSelector(row carrierRow, carrier *unstructured.Unstructured, built *corev1.Pod) string {
	if built != nil {
		return "metadata.name=" + built.Name
	}
	if row.kind == "Pod" {
		return "metadata.name=" + carrier.GetName()
	}
	return "label:sparkui.dev/application=" + carrier.GetName()
}

// awaitRun waits for a Running driver Pod picked by sel (not `not`), its UI listening, and the
// UI Service bound to it: targetPort the UI's port, a selector that picks exactly that Pod,
// held by it; then the EndpointSlice and the ClusterIP path.
func awaitRun(t *testing.T, n *testnode.Node, tl *uiTimeline, ns, svcName, sel string, not *corev1.Pod) run {
	t.Helper()
	c := n.Cluster
	ctx := testcluster.Context(t, 4*time.Minute)
	var r run
	testcluster.WaitFor(t, 3*time.Minute, "the driver Pod Running ("+sel+")", func() (bool, string) {
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
		var why []string
		for i := range l.Items {
			p := &l.Items[i]
			if (not != nil && p.UID == not.UID) || p.DeletionTimestamp != nil {
				continue
			}
			if p.Status.Phase == corev1.PodRunning {
				r.pod = p
				return true, ""
			}
			why = append(why, p.Name+": "+podWhy(p))
		}
		return false, strings.Join(why, "; ")
	})
	r.ctr = driverContainer(t, &r.pod.Spec)
	m := logLine(t, n, ns, r.pod.Name, r.ctr, regexp.MustCompile(`listening (\d+) app (\S+)`), 2*time.Minute)
	r.uiPort, r.appID = m[1], m[2]
	uid := string(r.pod.UID)
	testcluster.WaitFor(t, 90*time.Second, "the UI Service bound to "+r.pod.Name+" on "+r.uiPort, func() (bool, string) {
		var ok bool
		r.bound, ok = tl.first(func(s uiState) bool {
			return s.TargetPort == r.uiPort && (s.BoundPod == uid || s.Owner == uid) && len(s.Selector) > 0 && !s.withdrawnFor(uid)
		})
		return ok, tl.String()
	})
	// The selector picks exactly this Pod among the namespace's.
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(r.bound.Selector).String()})
	if err != nil {
		t.Fatal(err)
	}
	var picked []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			picked = append(picked, p.Name)
		}
	}
	if len(picked) != 1 || picked[0] != r.pod.Name {
		t.Errorf("the bound selector %v picks %v, want only %s", r.bound.Selector, picked, r.pod.Name)
	}
	ip := r.pod.Status.PodIP
	if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, r.pod.Name, metav1.GetOptions{}); err == nil {
		ip = p.Status.PodIP
	}
	want := fmt.Sprintf("%s:%s ready=true pod=%s/%s port=spark-ui", ip, r.uiPort, r.pod.Name, r.pod.UID)
	testcluster.WaitFor(t, 60*time.Second, "the EndpointSlice on the UI ("+want+")", func() (bool, string) {
		eps, err := sliceTargets(ctx, n, ns, svcName)
		if err != nil {
			return false, err.Error()
		}
		return len(eps) == 1 && eps[0] == want, strings.Join(eps, " ")
	})
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	front := fmt.Sprintf("http://%s:%d/api/v1/applications", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	testcluster.WaitFor(t, 30*time.Second, "the UI through the ClusterIP "+front, func() (bool, string) {
		code, body, err := get(t, n, front)
		if err != nil {
			return false, err.Error()
		}
		return code == 200 && strings.Contains(body, `"id":"`+r.appID+`"`) && strings.Contains(body, `"completed":false`), fmt.Sprintf("%d %s", code, body)
	})
	t.Logf("bound: %s → EndpointSlice %s, GET %s answers app %s", r.bound, want, front, r.appID)
	return r
}

// sliceTargets lists the Service's EndpointSlice endpoints as "ip:port ready=bool
// pod=<name>/<uid> port=<name>": which Pod each endpoint is, not only its address.
func sliceTargets(ctx context.Context, n *testnode.Node, ns, svc string) ([]string, error) {
	l, err := n.Cluster.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			for _, p := range s.Ports {
				ready := e.Conditions.Ready != nil && *e.Conditions.Ready
				ref := "none"
				if e.TargetRef != nil {
					ref = e.TargetRef.Name + "/" + string(e.TargetRef.UID)
				}
				port, name := int32(0), ""
				if p.Port != nil {
					port = *p.Port
				}
				if p.Name != nil {
					name = *p.Name
				}
				out = append(out, fmt.Sprintf("%s:%d ready=%t pod=%s port=%s", strings.Join(e.Addresses, ","), port, ready, ref, name))
			}
		}
	}
	return out, nil
}

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
