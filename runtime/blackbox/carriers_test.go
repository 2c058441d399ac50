package blackbox

// carriers_test.go: the runtime end to end per carrier kind. For each
// carrier the built sparkui-fn renders testdata/carrier-*/input.yaml; the UI Service, Role,
// RoleBinding (and the ServiceAccount) it emits are applied; the driver Pod is built from the
// REWRITTEN resource the way its operator or controller builds it (the builders below, after
// docs/operators.md, which names the operators' source files); the Pod is created and made Ready; the
// built runtime then runs as the kubelet runs the sparkui-runtime container of that Pod
// (podnet_test.go), as the Pod's ServiceAccount. Asserted: the bind (targetPort = the UI's
// port, selector = exactly this run's selector, EndpointSlice = this Pod's IP:port), the
// withdrawal (preStop hook or SIGTERM: the withdrawn selector, no endpoint, exit 0), and that
// the Service outlives the Pod. Carriers with successive runs (ScheduledSparkApplication,
// CronJob) run two: run 2 takes the Service over, run 1's withdrawal leaves it routed to run 2,
// run 2's withdraws it.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Labels the operators and controllers put on driver Pods (docs/operators.md).
const (
	labelAppID = "sparkui.dev/application" // the function's build-time identity label

	kubeflowAppName    = "sparkoperator.k8s.io/app-name"
	kubeflowLaunched   = "sparkoperator.k8s.io/launched-by-spark-operator"
	kubeflowSubmission = "sparkoperator.k8s.io/submission-id"
	kubeflowMutated    = "sparkoperator.k8s.io/mutated-by-spark-operator"
	kubeflowScheduled  = "sparkoperator.k8s.io/scheduled-app-name"

	kubeflowConnectName  = "sparkoperator.k8s.io/connect-name"
	kubeflowSparkVersion = "spark-version"

	apacheOperatorName = "spark.operator/name"
	apacheAppName      = "spark.operator/spark-app-name"

	jobControllerUID = "batch.kubernetes.io/controller-uid"
	jobName          = "batch.kubernetes.io/job-name"
	stsPodName       = "statefulset.kubernetes.io/pod-name"
	podTemplateHash  = "pod-template-hash"
)

// driverBuilder builds run's driver Pod (run 1, 2, …) from the rewritten carrier, and says
// what the stand-in Spark UI of that run lists.
type driverBuilder func(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions)

type carrierCase struct {
	dir      string // testdata/<dir>
	runLabel string // the run label of docs/operators.md's table, "" for none
	// role is the driver Pod's spark-role, "" for Spark's driver.
	role string
	// noHook: the operator replaces the driver container's lifecycle, so the Pod has no
	// withdraw hook and the runtime withdraws on SIGTERM.
	noHook bool
	runs   int
	build  driverBuilder
	// edit, when set, changes the input before rendering.
	edit func(t *testing.T, input string) string
	// unproven: the runtime cannot prove the UI is this Pod's and must never bind it.
	unproven bool
}

func TestCarrierKubeflowTemplate(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-template", runLabel: names.LabelAppSelector, runs: 1, build: kubeflowDriver(false, false)})
}

func TestCarrierKubeflowWebhook(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-webhook", runLabel: names.LabelAppSelector, runs: 1, build: kubeflowDriver(true, false)})
}

func TestCarrierKubeflowScheduled(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-scheduled", runLabel: names.LabelAppSelector, runs: 2, build: kubeflowDriver(false, true)})
}

// TestCarrierKubeflowSparkConnect: the Pod <name>-server kubeflow's SparkConnect controller
// makes from the rewritten spec.server.template. Its server container's lifecycle is the
// operator's, so no withdraw hook reaches the Pod: the runtime (a native sidecar, stopped
// only after the server container has exited) withdraws on SIGTERM.
func TestCarrierKubeflowSparkConnect(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-sparkconnect", role: "connect-server", noHook: true, runs: 1, build: connectServer})
}

// TestCarrierKubeflowSparkConnectService: a server container not named
// spark-kubernetes-driver (the first is the server), and a server Service named by the user
// (spec.server.service), which sparkui's UI Service keeps clear of.
func TestCarrierKubeflowSparkConnectService(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-sparkconnect-service", role: "connect-server", noHook: true, runs: 1, build: connectServer})
}

func TestCarrierApacheV1(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-apache-v1", runLabel: names.LabelAppSelector, runs: 1, build: apacheDriver})
}

// TestCarrierApacheV1Template: a v1 SparkApplication with a template of its own (a fixed
// spark.ui.port, its container named by the function's podTemplateContainerName).
func TestCarrierApacheV1Template(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-apache-v1-template", runLabel: names.LabelAppSelector, runs: 1, build: apacheDriver})
}

func TestCarrierApacheV1beta1(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-apache-v1beta1", runLabel: names.LabelAppSelector, runs: 1, build: apacheDriver})
}

// TestCarrierDeployment: the golden Deployment (Spark Connect, client mode under hostNetwork,
// spark.ui.port=0) with SUI022's fix applied (--conf spark.kubernetes.driver.pod.name=$(POD_NAME),
// POD_NAME from the downward API), which lets the runtime prove the UI on the node is this
// Pod's.
func TestCarrierDeployment(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-deployment", runLabel: podTemplateHash, runs: 1, build: workloadDriver})
}

// TestCarrierDeploymentUnprovenIdentity: the golden Deployment without its
// spark.kubernetes.driver.pod.name setting: client mode under hostNetwork with neither
// spark.app.id nor the pod name, so nothing proves which UI on the node is this Pod's. The
// function reports it (SUI022, an error: it still writes the items); deployed anyway, the
// runtime must find the UI, say why it does not bind, and not bind.
func TestCarrierDeploymentUnprovenIdentity(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-deployment", runLabel: podTemplateHash, runs: 1, build: workloadDriver, unproven: true,
		edit: func(t *testing.T, in string) string {
			const conf = "          - --conf\n          - spark.kubernetes.driver.pod.name=$(POD_NAME)\n"
			if strings.Count(in, conf) != 1 {
				t.Fatal("the Deployment input changed: update the edit")
			}
			return strings.Replace(in, conf, "", 1)
		}})
}

func TestCarrierStatefulSet(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-statefulset", runLabel: stsPodName, runs: 1, build: workloadDriver})
}

func TestCarrierJob(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-job", runLabel: jobControllerUID, runs: 1, build: workloadDriver})
}

func TestCarrierCronJob(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-cronjob", runLabel: jobControllerUID, runs: 2, build: workloadDriver})
}

var namespaceLine = regexp.MustCompile(`(?m)^(\s*namespace:\s*)[a-z0-9-]+\s*$`)

// renderCarrier renders testdata/<dir>/input.yaml with its namespaces replaced by ns, and
// returns the output and the carrier (the first item, as in every carrier-* input but the
// StatefulSet's, whose ConfigMap comes first: the first item of a carrier kind).
func renderCarrier(t *testing.T, dir, ns string, edit func(*testing.T, string) string, errorsAllowed bool) (rendered, *yaml.RNode) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", dir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := string(b)
	if edit != nil {
		in = edit(t, in)
	}
	r := renderListExit(t, namespaceLine.ReplaceAllString(in, "${1}"+ns), errorsAllowed)
	for _, it := range r.items {
		switch it.GetKind() {
		case "SparkApplication", "ScheduledSparkApplication", "SparkConnect", "Deployment", "StatefulSet", "Job", "CronJob":
			return r, it
		}
	}
	t.Fatalf("no carrier in the output of %s", dir)
	return r, nil
}

// applySparkui applies what the function adds next to the carrier (UI Service, Role,
// RoleBinding, ServiceAccount) as a pipeline does, and creates the RoleBinding's
// ServiceAccount when the input has none. The carrier itself is not applied: no operator
// runs here, and the workload controllers of kube-controller-manager would build Pods of
// their own next to the test's.
func applySparkui(t *testing.T, c *testcluster.Cluster, ns string, r rendered) (svc string) {
	t.Helper()
	var objs []*yaml.RNode
	var sas []string
	for _, it := range r.items {
		if it.GetNamespace() != ns {
			continue
		}
		switch it.GetKind() {
		case "Service":
			svc = it.GetName()
		case "RoleBinding":
			subj, err := it.Pipe(yaml.Lookup("subjects", "[kind=ServiceAccount]", "name"))
			if err != nil || subj == nil {
				t.Fatalf("RoleBinding %s has no ServiceAccount subject: %v", it.GetName(), err)
			}
			sas = append(sas, yaml.GetValue(subj))
		case "Role", "ServiceAccount":
		default:
			continue
		}
		objs = append(objs, it)
	}
	if svc == "" || len(sas) != 1 {
		t.Fatalf("the function emitted no UI Service or not one binder: %d objects", len(objs))
	}
	var buf strings.Builder
	if err := (kio.ByteWriter{Writer: &buf}).Write(objs); err != nil {
		t.Fatal(err)
	}
	kubectl(t, c.KubeconfigFile(t, c.Config), []byte(buf.String()), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	_, err := c.Client.CoreV1().ServiceAccounts(ns).Create(testcluster.Context(t, 10*time.Second),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sas[0], Namespace: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return svc
}

// driverRun is one run's driver Pod with its runtime.
type driverRun struct {
	pod    *corev1.Pod
	ip     string
	proc   *runtimeProc
	sock   string
	uiPort int
	sel    map[string]string // this run's selector
}

func (d driverRun) slice() []string { return []string{fmt.Sprintf("%s:%d ready=true", d.ip, d.uiPort)} }

func runCarrier(t *testing.T, cc carrierCase) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	r, carrier := renderCarrier(t, cc.dir, ns, cc.edit, cc.unproven)
	// An input whose identity cannot be proven is reported at build time (SUI022); the test
	// deploys it anyway to see the runtime refuse it too.
	if got := strings.Contains(r.results, "[SUI022]"); got != cc.unproven {
		t.Fatalf("SUI022 reported: %v, want %v\n%s", got, cc.unproven, r.results)
	}
	app := carrier.GetName()
	svc := applySparkui(t, c, ns, r)
	node := ns + "-node"
	addNode(t, c, node)

	start := func(run int) driverRun {
		pod, ui := cc.build(t, carrier, run)
		pod.Namespace, pod.Spec.NodeName = ns, node
		if pod.Spec.ServiceAccountName == "" && pod.Spec.DeprecatedServiceAccount == "" {
			// The ServiceAccount admission plugin's default, which this control plane runs
			// without. (The API server itself copies a deprecated serviceAccount into
			// serviceAccountName: core/v1 conversion of PodSpec.)
			pod.Spec.ServiceAccountName = "default"
		}
		created := createBuiltPod(t, c, ns, pod, run)
		ip := fmt.Sprintf("10.244.%d.%d", len(ns)%200, 10+run)
		if created.Spec.HostNetwork {
			ip = fmt.Sprintf("192.0.2.%d", 100+run)
		}
		d := driverRun{pod: podReady(t, c, ns, created.Name, ip), ip: ip}
		role := cc.role
		if role == "" {
			role = names.RoleDriver
		}
		d.sel = map[string]string{labelAppID: app, names.LabelSparkRole: role}
		if cc.runLabel != "" {
			d.sel[cc.runLabel] = d.pod.Labels[cc.runLabel]
			if d.pod.Labels[cc.runLabel] == "" {
				t.Fatalf("run %d: the driver Pod has no run label %s: %v", run, cc.runLabel, d.pod.Labels)
			}
		}
		d.proc, d.sock, d.uiPort = startPodRuntime(t, c, d.pod, ui)
		if cc.unproven {
			return d
		}
		want := svcState{selector: d.sel, targetPort: strconv.Itoa(d.uiPort)}
		testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("run %d's bind", run), func() (bool, string) {
			got := service(t, c, ns, svc)
			return got.String() == want.String(), got.String() + "\n" + d.proc.logs()
		})
		waitEndpoints(t, c, ns, svc, d.slice())
		noOwner(t, c, ns, svc)
		return d
	}
	withdrawn := func(d driverRun) {
		t.Helper()
		want := svcState{selector: map[string]string{names.WithdrawnSelectorKey: string(d.pod.UID)}, targetPort: strconv.Itoa(d.uiPort)}
		if got := service(t, c, ns, svc); got.String() != want.String() {
			t.Fatalf("after %s's withdrawal: %s, want %s\n%s", d.pod.Name, got, want, d.proc.logs())
		}
		waitEndpoints(t, c, ns, svc, nil)
	}

	first := start(1)
	if cc.unproven {
		testcluster.WaitFor(t, 30*time.Second, "the runtime to say the UI's identity cannot be proven", func() (bool, string) {
			return strings.Contains(first.proc.logs(), "identity cannot be proven"), first.proc.logs()
		})
		time.Sleep(2 * time.Second)
		if got := service(t, c, ns, svc); len(got.selector) != 0 {
			t.Fatalf("bound a UI whose identity is not proven: %s\n%s", got, first.proc.logs())
		}
		waitEndpoints(t, c, ns, svc, nil)
		if code := sigterm(t, first); code != 0 {
			t.Errorf("runtime exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
		}
		return
	}
	if cc.runs == 1 && cc.noHook {
		// The kubelet stops a native sidecar only after the main containers have exited:
		// SIGTERM is the runtime's cue.
		if ic := sidecarOf(t, first.pod); ic.RestartPolicy == nil || *ic.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Fatalf("the runtime is no native sidecar in %s", first.pod.Name)
		}
		for _, ctr := range first.pod.Spec.Containers {
			if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil && ctr.Lifecycle.PreStop.Exec != nil &&
				sidecar.IsWithdrawCommand(ctr.Lifecycle.PreStop.Exec.Command) {
				t.Fatalf("%s: container %s has a withdraw hook, which its operator replaces", first.pod.Name, ctr.Name)
			}
		}
		holdEndpoints(t, c, ns, svc, first.slice(), time.Second)
		if code := sigterm(t, first); code != 0 {
			t.Errorf("runtime exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
		}
		withdrawn(first)
		deletePod(t, c, first.pod)
		serviceOutlives(t, c, ns, svc)
		return
	}
	if cc.runs == 1 {
		preStop(t, first)
		withdrawn(first)
		if code := sigterm(t, first); code != 0 {
			t.Errorf("runtime exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
		}
		deletePod(t, c, first.pod)
		serviceOutlives(t, c, ns, svc)
		return
	}

	// Two runs share the Service: run 2 takes it over while run 1 still runs.
	second := start(2)
	holdEndpoints(t, c, ns, svc, second.slice(), time.Second)
	// Run 1 ends (its preStop hook): it must not undo run 2's bind.
	preStop(t, first)
	if got, want := service(t, c, ns, svc), (svcState{selector: second.sel, targetPort: strconv.Itoa(second.uiPort)}); got.String() != want.String() {
		t.Fatalf("run 1's withdrawal changed run 2's bind: %s, want %s\n%s", got, want, first.proc.logs())
	}
	holdEndpoints(t, c, ns, svc, second.slice(), 2*time.Second)
	if code := sigterm(t, first); code != 0 {
		t.Errorf("run 1: exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
	}
	deletePod(t, c, first.pod)
	holdEndpoints(t, c, ns, svc, second.slice(), time.Second)
	// Run 2 ends by SIGTERM (the Pod's deletion, no preStop hook run): withdrawn, exit 0.
	if code := sigterm(t, second); code != 0 {
		t.Errorf("run 2: exit code %d after SIGTERM, want 0\n%s", code, second.proc.logs())
	}
	withdrawn(second)
	deletePod(t, c, second.pod)
	serviceOutlives(t, c, ns, svc)
}

// preStop runs the driver container's preStop hook as the kubelet does: the emitted command,
// with the binary and socket at the test's paths.
func preStop(t *testing.T, d driverRun) {
	t.Helper()
	var hook []string
	for _, ctr := range d.pod.Spec.Containers {
		if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil && ctr.Lifecycle.PreStop.Exec != nil &&
			sidecar.IsWithdrawCommand(ctr.Lifecycle.PreStop.Exec.Command) {
			hook = append([]string{}, ctr.Lifecycle.PreStop.Exec.Command...)
		}
	}
	if hook == nil {
		t.Fatalf("%s: no container has the withdraw preStop hook", d.pod.Name)
	}
	hook[0] = runtimeBin
	for i, a := range hook {
		if strings.HasPrefix(a, "--socket=") {
			hook[i] = "--socket=" + d.sock
		}
	}
	if out, err := exec.Command(hook[0], hook[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: preStop hook: %v\n%s\nruntime:\n%s", d.pod.Name, err, out, d.proc.logs())
	}
}

// sigterm stops the runtime as the kubelet stops the container and returns its exit code.
func sigterm(t *testing.T, d driverRun) int {
	t.Helper()
	if err := d.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.proc.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: the runtime did not stop within 15 s of SIGTERM\n%s", d.pod.Name, d.proc.logs())
	}
	return d.proc.cmd.ProcessState.ExitCode()
}

func deletePod(t *testing.T, c *testcluster.Cluster, pod *corev1.Pod) {
	t.Helper()
	if err := c.Client.CoreV1().Pods(pod.Namespace).Delete(testcluster.Context(t, 10*time.Second), pod.Name,
		metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
}

func noOwner(t *testing.T, c *testcluster.Cluster, ns, svc string) {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 0 {
		t.Fatalf("the bound Service has owners %v: the garbage collector would delete it with the run's Pod", s.OwnerReferences)
	}
}

// serviceOutlives: with every driver Pod deleted, the garbage collector (kube-controller-manager
// runs) leaves the Service alone, for the next run.
func serviceOutlives(t *testing.T, c *testcluster.Cluster, ns, svc string) {
	t.Helper()
	time.Sleep(2 * time.Second)
	noOwner(t, c, ns, svc)
}

// --- builders ---------------------------------------------------------------------------

func lookup(t *testing.T, n *yaml.RNode, path ...string) *yaml.RNode {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func str(t *testing.T, n *yaml.RNode, path ...string) string {
	if v := lookup(t, n, path...); v != nil {
		return yaml.GetValue(v)
	}
	return ""
}

// decode converts the node at path (absent: nothing) into out, a typed API object.
func decode(t *testing.T, n *yaml.RNode, out any, path ...string) {
	t.Helper()
	v := lookup(t, n, path...)
	if v == nil {
		return
	}
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", strings.Join(path, "."), err)
	}
}

func stringMap(t *testing.T, n *yaml.RNode, path ...string) map[string]string {
	m := map[string]string{}
	decode(t, n, &m, path...)
	return m
}

func merge(dst map[string]string, srcs ...map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	for _, s := range srcs {
		for k, v := range s {
			dst[k] = v
		}
	}
	return dst
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// sparkContainer picks the container Spark makes the driver's, as
// KubernetesUtils.selectSparkContainer does: the one named name, else the first, else a new
// one; it returns its index.
func sparkContainer(spec *corev1.PodSpec, name string) int {
	for i, c := range spec.Containers {
		if name != "" && c.Name == name {
			return i
		}
	}
	if len(spec.Containers) == 0 {
		spec.Containers = []corev1.Container{{}}
	}
	return 0
}

// sparkDriver does what Spark's BasicDriverFeatureStep and DriverKubernetesCredentialsFeatureStep
// do to the template (editOrNewSpec: the template's containers, init containers, volumes and
// labels are kept): the container's name (spark-kubernetes-driver when it has none), image and
// ports (driver RPC, block manager, UI), the ServiceAccount, restartPolicy Never, the Pod's
// name, and Spark's labels spark-app-selector=<app id> and spark-role=driver on top of the
// template's and the conf's (spark.kubernetes.driver.label.*). Spark's conf volume and env
// are left out: nothing of the runtime's depends on them.
func sparkDriver(pod *corev1.Pod, idx int, image, serviceAccount string, uiPort int, appID string, confLabels map[string]string) {
	c := &pod.Spec.Containers[idx]
	if c.Name == "" {
		c.Name = names.DriverContainer
	}
	if c.Image == "" {
		c.Image = image
	}
	c.Args = []string{"driver", "--properties-file", "/opt/spark/conf/spark.properties"}
	c.Ports = append(c.Ports,
		corev1.ContainerPort{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "spark-ui", ContainerPort: int32(uiPort), Protocol: corev1.ProtocolTCP})
	if serviceAccount != "" {
		pod.Spec.ServiceAccountName = serviceAccount
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Labels = merge(pod.Labels, confLabels, map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver})
}

func confPort(t *testing.T, conf *yaml.RNode) int {
	if p := str(t, conf, "spark.ui.port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 4040
}

// kubeflowDriver builds a kubeflow spark-operator driver Pod (docs/operators.md "kubeflow
// spark-operator"). The operator runs spark-submit with
// sparkConf, then the confs it derives: driver.serviceAccount, and the driver labels
// (spark.kubernetes.driver.label.*) — the SparkApplication's metadata.labels (v2.1+),
// driver.labels, app-name, launched-by-spark-operator, submission-id (a new UUID per
// submission). spark-submit gives the driver spark-app-selector=spark-<32 hex>, random per run.
//
// Template injection (webhook false): the operator passes spec.driver.template as
// spark.kubernetes.driver.podTemplateFile with podTemplateContainerName=spark-kubernetes-driver;
// Spark loads it as the Pod and keeps its labels, init containers and volumes.
// Webhook injection (true; v1.x/v2.0 operators, no template): Spark builds the Pod from nothing,
// the operator adds mutated-by-spark-operator=true, and its mutating webhook
// (internal/webhook/sparkpod_defaulter.go) then appends driver.initContainers (unless one of
// the same name and image is there), adds each spec.volumes entry that a driver.volumeMounts
// entry mounts together with that mount into the Spark container, and replaces the Spark
// container's lifecycle with driver.lifecycle.
//
// A ScheduledSparkApplication (scheduled true) runs spec.template as a SparkApplication
// <ssa>-<timestamp in ns> labelled scheduled-app-name=<ssa> (which reaches the driver, v2.1+).
func kubeflowDriver(webhook, scheduled bool) driverBuilder {
	return func(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
		spec := lookup(t, carrier, "spec")
		appName := carrier.GetName()
		appLabels := merge(nil, carrier.GetLabels())
		if scheduled {
			spec = lookup(t, spec, "template")
			appName = fmt.Sprintf("%s-%d", carrier.GetName(), time.Date(2026, 11, 30, 6*run, 0, 0, 0, time.UTC).UnixNano())
			appLabels[kubeflowScheduled] = carrier.GetName()
		}
		driver := lookup(t, spec, "driver")
		conf := lookup(t, spec, "sparkConf")

		pod := &corev1.Pod{}
		if !webhook {
			var tmpl corev1.PodTemplateSpec
			decode(t, driver, &tmpl, "template")
			pod.ObjectMeta, pod.Spec = tmpl.ObjectMeta, tmpl.Spec
		}
		pod.Name = str(t, driver, "podName")
		if pod.Name == "" {
			pod.Name = appName + "-driver"
		}
		confLabels := merge(nil, appLabels, stringMap(t, driver, "labels"), map[string]string{
			kubeflowAppName: appName, kubeflowLaunched: "true", kubeflowSubmission: string(uuid.NewUUID())})
		if webhook {
			confLabels[kubeflowMutated] = "true"
		}
		sa := str(t, driver, "serviceAccount")
		if sa == "" {
			sa = str(t, conf, "spark.kubernetes.authenticate.driver.serviceAccountName")
		}
		image := str(t, driver, "image")
		if image == "" {
			image = str(t, spec, "image")
		}
		idx := sparkContainer(&pod.Spec, names.DriverContainer)
		appID := "spark-" + randomHex(t, 16)
		sparkDriver(pod, idx, image, sa, confPort(t, conf), appID, confLabels)

		if webhook {
			var inits []corev1.Container
			decode(t, driver, &inits, "initContainers")
			for _, ic := range inits {
				dup := false
				for _, have := range pod.Spec.InitContainers {
					dup = dup || (have.Name == ic.Name && have.Image == ic.Image)
				}
				if !dup {
					pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
				}
			}
			var vols []corev1.Volume
			var mounts []corev1.VolumeMount
			decode(t, spec, &vols, "volumes")
			decode(t, driver, &mounts, "volumeMounts")
			for _, m := range mounts {
				for _, v := range vols {
					if v.Name == m.Name {
						pod.Spec.Volumes = append(pod.Spec.Volumes, v)
						pod.Spec.Containers[idx].VolumeMounts = append(pod.Spec.Containers[idx].VolumeMounts, m)
					}
				}
			}
			var lc corev1.Lifecycle
			decode(t, driver, &lc, "lifecycle")
			if lookup(t, driver, "lifecycle") != nil {
				pod.Spec.Containers[idx].Lifecycle = &lc
			}
		}
		// Cluster mode: the driver's conf names its Pod (spark.kubernetes.driver.pod.name).
		return pod, uiOptions{AppID: appID, PodName: pod.Name}
	}
}

// connectServer builds the Pod kubeflow's SparkConnect controller creates
// (kubeflow/spark-operator internal/controller/sparkconnect/reconciler.go mutateServerPod,
// options.go, util.go): named <name>-server; spec.server.template's labels, annotations and
// spec; a container spark-kubernetes-driver when the template has none; in the server
// container (spark-kubernetes-driver, else the first) the image from spec.image when unset,
// command [bash, -c] and start-connect-server.sh's line as args, TCP probes on 15002 unless
// set, env POD_IP and SPARK_NO_DAEMONIZE appended, the spark-conf mount appended, and the
// whole lifecycle replaced by the operator's preStop (stop-connect-server.sh); the spark-conf
// volume appended; labels launched-by-spark-operator, connect-name, spark-role=connect-server
// and spark-version over the template's. The server is the driver in client mode: its UI
// lists spark.app.id when sparkConf sets it, else an id of Spark's making, and
// spark.kubernetes.driver.pod.name=<name>-server (driverConfOption).
func connectServer(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	name := carrier.GetName()
	var tmpl corev1.PodTemplateSpec
	decode(t, carrier, &tmpl, "spec", "server", "template")
	// What sparkui wrote into the template, to check the operator keeps it all.
	written := tmpl.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-server", Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	if len(pod.Spec.Containers) == 0 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: names.DriverContainer})
	}
	idx := 0
	for i, ctr := range pod.Spec.Containers {
		if ctr.Name == names.DriverContainer {
			idx = i
			break
		}
	}
	ctr := &pod.Spec.Containers[idx]
	if ctr.Image == "" {
		ctr.Image = str(t, carrier, "spec", "image")
	}
	ctr.Command = []string{"bash", "-c"}
	ctr.Args = []string{"${SPARK_HOME}/sbin/start-connect-server.sh --master k8s://https://10.0.0.1:443 --conf spark.driver.port=7078 --conf spark.driver.blockManager.port=7079 --conf spark.kubernetes.driver.pod.name=" + name + "-server"}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(15002)}}, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}
	if ctr.StartupProbe == nil {
		ctr.StartupProbe = probe
	}
	if ctr.ReadinessProbe == nil {
		ctr.ReadinessProbe = probe
	}
	ctr.Env = append(ctr.Env,
		corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		corev1.EnvVar{Name: "SPARK_NO_DAEMONIZE", Value: "true"})
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "spark-conf", SubPath: "executor-pod-template.yaml", MountPath: "/tmp/spark/executor-pod-template.yaml", ReadOnly: true})
	ctr.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", "${SPARK_HOME}/sbin/stop-connect-server.sh"}}}}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "spark-conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name + "-conf"},
		Items:                []corev1.KeyToPath{{Key: "executor-pod-template.yaml", Path: "executor-pod-template.yaml"}}}}})
	pod.Labels = merge(pod.Labels, map[string]string{kubeflowLaunched: "true", kubeflowConnectName: name,
		names.LabelSparkRole: "connect-server", kubeflowSparkVersion: str(t, carrier, "spec", "sparkVersion")})

	// Nothing sparkui wrote is lost: its label, the sidecar and its volume reach the Pod as
	// written, and the server container it left untouched (it holds no sparkui mount or hook).
	if pod.Labels[labelAppID] != written.Labels[labelAppID] || written.Labels[labelAppID] == "" {
		t.Fatalf("identity label: template %v, Pod %v", written.Labels, pod.Labels)
	}
	for _, ic := range written.Spec.InitContainers {
		if ic.Name == sidecar.ContainerName {
			if got := sidecarOf(t, pod); got.Image != ic.Image || strings.Join(got.Args, " ") != strings.Join(ic.Args, " ") {
				t.Fatalf("the runtime changed on the way into the Pod: %v", got)
			}
		}
	}
	for _, wc := range written.Spec.Containers {
		for _, m := range wc.VolumeMounts {
			if m.Name == sidecar.VolumeName || m.Name == sidecar.AuthVolumeName {
				t.Fatalf("sparkui mounted %s into container %s, where it serves only a hook the operator replaces", m.Name, wc.Name)
			}
		}
	}
	ui := uiOptions{AppID: fmt.Sprintf("spark-application-%d", time.Now().UnixMilli()), PodName: pod.Name}
	if id := str(t, carrier, "spec", "sparkConf", "spark.app.id"); id != "" {
		ui.AppID = id
	}
	return pod, ui
}

// apacheDriver builds an Apache spark-kubernetes-operator (1.0.0) driver Pod
// (docs/operators.md "Apache spark-kubernetes-operator"): Spark's
// KubernetesDriverBuilder in the operator, from spec.driverSpec.podTemplateSpec and
// spec.sparkConf. The app id is <name>-<attempt> (attempt 0 first; short names are not
// hashed), the Pod <app id>-driver; the Spark container is the one named by
// spark.kubernetes.driver.podTemplateContainerName, else the first; the ServiceAccount is
// spark.kubernetes.authenticate.driver.serviceAccountName, else the template's; labels
// spark.operator/name=spark-kubernetes-operator and spark.operator/spark-app-name=<name> (by
// spark.kubernetes.driver.label.* and OwnerResourceDecorator) and Spark's on top of the
// template's; SecurityContextDecorator sets allowPrivilegeEscalation=false on every container
// and init container that leaves it unset.
func apacheDriver(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	spec := lookup(t, carrier, "spec")
	conf := lookup(t, spec, "sparkConf")
	var tmpl corev1.PodTemplateSpec
	decode(t, spec, &tmpl, "driverSpec", "podTemplateSpec")
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	appID := fmt.Sprintf("%s-%d", carrier.GetName(), run-1)
	pod.Name = appID + "-driver"
	sa := str(t, conf, "spark.kubernetes.authenticate.driver.serviceAccountName")
	// The upstream examples' image placeholder, filled with the runtime version as their
	// build does.
	image := strings.ReplaceAll(str(t, conf, "spark.kubernetes.container.image"), "{{SPARK_VERSION}}", str(t, spec, "runtimeVersions", "sparkVersion"))
	idx := sparkContainer(&pod.Spec, str(t, conf, "spark.kubernetes.driver.podTemplateContainerName"))
	sparkDriver(pod, idx, image, sa, confPort(t, conf), appID, map[string]string{
		apacheOperatorName: "spark-kubernetes-operator", apacheAppName: carrier.GetName()})
	no := false
	for _, cs := range []([]corev1.Container){pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].SecurityContext == nil {
				cs[i].SecurityContext = &corev1.SecurityContext{}
			}
			if cs[i].SecurityContext.AllowPrivilegeEscalation == nil {
				cs[i].SecurityContext.AllowPrivilegeEscalation = &no
			}
		}
	}
	return pod, uiOptions{AppID: appID, PodName: pod.Name}
}

// workloadDriver builds the Pod a workload controller creates from its pod template
// (CronJob: spec.jobTemplate.spec.template, through the Job the CronJob controller creates),
// with the controller's labels: Job — batch.kubernetes.io/controller-uid=<the Job's UID>,
// batch.kubernetes.io/job-name and their legacy forms controller-uid and job-name, Pod
// <job>-<5 random>; CronJob — the same for its run's Job <cronjob>-<scheduled minutes>;
// StatefulSet — statefulset.kubernetes.io/pod-name=<name>-0, apps.kubernetes.io/pod-index,
// controller-revision-hash, hostname and subdomain; Deployment (through its ReplicaSet) —
// pod-template-hash (FNV-32a of the template, SafeEncodeString'd as the controller does; the
// hash input differs, its shape does not), Pod <name>-<hash>-<5 random>. The Pod is the
// driver in client mode: Spark lists its application as spark-application-<millis> (or
// local-<millis> with a local master) and does not set spark.kubernetes.driver.pod.name.
func workloadDriver(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	name := carrier.GetName()
	path := []string{"spec", "template"}
	if carrier.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template"}
	}
	var tmpl corev1.PodTemplateSpec
	decode(t, carrier, &tmpl, path...)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: merge(nil, tmpl.Labels), Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	var controller map[string]string
	switch carrier.GetKind() {
	case "Job", "CronJob":
		job := name
		if carrier.GetKind() == "CronJob" {
			job = fmt.Sprintf("%s-%d", name, time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC).Unix()/60+int64(24*60*(run-1)))
		}
		uid := string(uuid.NewUUID())
		controller = map[string]string{jobControllerUID: uid, jobName: job, "controller-uid": uid, "job-name": job}
		pod.Name = job + "-" + utilrand.String(5)
	case "StatefulSet":
		pod.Name = name + "-0"
		controller = map[string]string{stsPodName: pod.Name, "apps.kubernetes.io/pod-index": "0", "controller-revision-hash": name + "-" + templateHash(t, tmpl)}
		pod.Spec.Hostname, pod.Spec.Subdomain = pod.Name, str(t, carrier, "spec", "serviceName")
	case "Deployment":
		hash := templateHash(t, tmpl)
		controller = map[string]string{podTemplateHash: hash}
		pod.Name = name + "-" + hash + "-" + utilrand.String(5)
	default:
		t.Fatalf("not a workload: %s", carrier.GetKind())
	}
	pod.Labels = merge(pod.Labels, controller)
	// What the UI lists: spark.app.id when the driver's command line sets it, else Spark's
	// generated id; spark.kubernetes.driver.pod.name only when set (its $(VAR)s expanded by the
	// kubelet from the container's env).
	ui := uiOptions{AppID: fmt.Sprintf("spark-application-%d", time.Now().UnixMilli())}
	driver := pod.Spec.Containers[sparkContainer(&pod.Spec, names.DriverContainer)]
	for _, a := range expandArgs(append(append([]string{}, driver.Command...), driver.Args...), containerEnv(t, pod, driver)) {
		if v, ok := strings.CutPrefix(a, "spark.kubernetes.driver.pod.name="); ok {
			ui.PodName = v
		}
		if v, ok := strings.CutPrefix(a, "spark.app.id="); ok {
			ui.AppID = v
		}
	}
	return pod, ui
}

func templateHash(t *testing.T, tmpl corev1.PodTemplateSpec) string {
	b, err := json.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New32a()
	_, _ = h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// createBuiltPod creates the driver Pod an operator or controller would build for run, with
// the cluster's PriorityClass its template names.
func createBuiltPod(t *testing.T, c *testcluster.Cluster, ns string, pod *corev1.Pod, run int) *corev1.Pod {
	t.Helper()
	if pc := pod.Spec.PriorityClassName; pc != "" {
		_, err := c.Client.SchedulingV1().PriorityClasses().Create(testcluster.Context(t, 10*time.Second),
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc}, Value: 100}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	created, err := c.Client.CoreV1().Pods(ns).Create(testcluster.Context(t, 10*time.Second), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("run %d: the driver Pod as built: %v", run, err)
	}
	return created
}
