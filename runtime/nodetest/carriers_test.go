package nodetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

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
	imgs := append([]testnode.Image{{Ref: RuntimeImage, Name: "sparkui-runtime", Binary: rt}}, standIns(ui, carrierImages...)...)
	// Stackable's product image keeps Spark under /stackable/spark (the operator runs
	// /stackable/spark/bin/spark-submit: stackabletech/spark-k8s-operator
	// rust/operator-binary/src/crd/mod.rs build_command); its driver, like every operator's, is
	// started by the image's entrypoint with Spark's `driver --properties-file …` arguments.
	imgs = append(imgs, testnode.Image{Ref: operatortest.StackableImage("3.5.6"), Name: "fakespark-ui", Binary: ui,
		Paths: []string{"/stackable/spark/bin/spark-submit"}, Env: []string{"SPARK_HOME=/stackable/spark"}})
	// The same runtime under a second tag: a restart-class change (restartclass_test.go).
	imgs = append(imgs, testnode.Image{Ref: RuntimeImage2, Name: "sparkui-runtime", Binary: rt})
	return testnode.Start(t, testnode.Options{Images: imgs, Controllers: workloadControllers,
		CRDDirectoryPaths: []string{"../../testdata/assets/crds", "../../testdata/assets/crds-stackable"}})
}

// standIns is the stand-in UI ui under each of refs, with the paths and SPARK_HOME of
// apache/spark's images, where the carriers' manifests run Spark.
func standIns(ui []byte, refs ...string) []testnode.Image {
	var imgs []testnode.Image
	for _, ref := range refs {
		imgs = append(imgs, testnode.Image{Ref: ref, Name: "fakespark-ui", Binary: ui, Paths: standInPaths, Env: []string{"SPARK_HOME=/opt/spark"}})
	}
	return imgs
}

// renderFiles runs the built function on the resources of files (paths from the repository
// root; a ResourceList's items, or YAML documents) with a SparkUIService whose spec is spec
// and whose runtime image is RuntimeImage.
func renderFiles(t *testing.T, spec string, files ...string) []*unstructured.Unstructured {
	t.Helper()
	return renderWith(t, RuntimeImage, spec, files...)
}

// fnBinary is the built sparkui-fn, written to a file of the test.
func fnBinary(t *testing.T) string {
	t.Helper()
	fn, err := testnode.BuildGo("./fn")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sparkui-fn")
	if err := os.WriteFile(bin, fn, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// renderWith is renderFiles with the runtime image image.
func renderWith(t *testing.T, image, spec string, files ...string) []*unstructured.Unstructured {
	t.Helper()
	bin := fnBinary(t)
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
	if err := unstructured.SetNestedField(cfg, image, "runtime", "image"); err != nil {
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
	deletePod     ending = iota // the Pod deleted (an operator's application deleted, spark-submit's Pod)
	recreate                    // Deployment: `kubectl rollout restart` under strategy Recreate, then the Deployment deleted
	restartPod                  // StatefulSet: its Pod deleted and recreated by the controller, then the StatefulSet deleted
	completes                   // Job, CronJob: the application ends by itself; the Job completes
	deleteCarrier               // the operator's resource deleted: the garbage collector deletes the driver Pod
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
	// operator: the real kubeflow spark-operator makes the driver (or the SparkConnect
	// server) from the applied carrier (carriers_kubeflow_test.go,
	// carriers_sparkconnect_test.go); webhook: through its mutating webhook (no template).
	operator, webhook bool
}

// carrierRows: every carrier sparkui supports (docs/operators.md). A new carrier is a row.
var carrierRows = []carrierRow{
	{name: "spark-submit Pod", files: []string{"examples/spark-submit/manifests.yaml"}, kind: "Pod", end: deletePod, owned: true},
	{name: "kubeflow SparkApplication (template)", files: []string{"examples/kubeflow/spark-pi.yaml"}, config: "service: {type: ClusterIP}",
		kind: "SparkApplication", end: deleteCarrier, operator: true},
	{name: "kubeflow ScheduledSparkApplication", files: []string{"examples/kubeflow/nightly-pi.yaml"}, config: "service: {type: ClusterIP}",
		kind: "ScheduledSparkApplication", end: deleteCarrier, operator: true},
	{name: "kubeflow SparkApplication (webhook)", files: []string{"examples/kubeflow-webhook/spark-etl.yaml"}, config: "kubeflow: {injection: webhook}",
		kind: "SparkApplication", end: deleteCarrier, claims: []string{"spark-events"}, operator: true, webhook: true},
	{name: "Apache SparkApplication", files: []string{"examples/apache-operator/word-count.yaml"},
		kind: "SparkApplication", end: deletePod, claims: []string{"word-count-corpus"}, build: apacheDriver},
	{name: "stackable SparkApplication", files: []string{"testdata/carrier-stackable/input.yaml"},
		kind: "SparkApplication", end: deletePod, build: stackableDriver},
	{name: "kubeflow SparkConnect", files: []string{"testdata/carrier-kubeflow-sparkconnect/input.yaml"},
		kind: "SparkConnect", end: deleteCarrier, noHook: true, operator: true},
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
	startKubeflow(t, n)
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

	// What the pipeline applies: the function's output, but the custom resource of an
	// operator that does not run here (Apache, Stackable: the test builds its driver Pod below).
	var driver *corev1.Pod
	var extra *corev1.ConfigMap
	var apply []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o == carrier && row.operator:
			kubeflowEdit(t, o, svcName)
			apply = append(apply, o)
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
	if row.operator {
		operatorMade(t, n, carrier, first, row.webhook)
	}

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
	case deleteCarrier:
		deleted := time.Now()
		deleteObject(t, n, carrier)
		ended(t, n, tl, ns, svcName, first, row.noHook, deleted)
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
