// Package blackbox runs the built sparkui-fn and sparkui-runtime together against a real
// kube-apiserver and kube-controller-manager: the function's output is applied, and the runtime
// runs with exactly the args of the sidecar the function emitted, as the driver's
// ServiceAccount under the Role the function emitted.
//
// reapply_test.go: field ownership between a pipeline and the runtime (docs/gitops.md):
// the function's output is applied to a real kube-apiserver and kube-controller-manager, the
// built sparkui-runtime binds the UI Service as the driver's ServiceAccount under the Role the
// function emits, with the args of the sidecar the function emits, and the SAME output is then
// applied again the ways pipelines do (gitops_test.go): `kubectl apply` client-side (CI) and
// server-side, Argo CD's two sync paths (its engine, gitops-engine, as argocd_test.go drives it:
// the default client-side sync and ServerSideApply=true) and Flux's
// kustomize-controller (github.com/fluxcd/pkg/ssa, with and without spec.force). The bind,
// and after a withdrawal the withdrawal, must survive each of them: targetPort, selector and
// the EndpointSlice stay as the runtime set them, and no applier's drift detection reports
// the runtime's fields.
package blackbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/podnet"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

var fnBin, runtimeBin string

// clusterOpts is the package's one control plane: kube-apiserver with both IP families (the
// carriers' UI Services ask for IPv6 first) and kube-controller-manager (EndpointSlices,
// garbage collection).
var clusterOpts = testcluster.Options{ControllerManager: true,
	APIServerArgs: map[string][]string{"service-cluster-ip-range": {"10.0.0.0/24,fd00:10:96::/112"}}}

func TestMain(m *testing.M) {
	if os.Getenv(podNetEnv) != "" { // this binary as a driver Pod's network (podnet_test.go)
		os.Exit(podNetMain(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "sparkui-blackbox-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fnBin, runtimeBin = filepath.Join(dir, "sparkui-fn"), filepath.Join(dir, "sparkui-runtime")
	for bin, pkg := range map[string]string{fnBin: "../../fn", runtimeBin: ".."} {
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := testcluster.Run(m)
	_ = os.RemoveAll(dir)
	podnet.CloseRelays()
	os.Exit(code)
}

// input is what a pipeline feeds the function: a driver Pod under hostNetwork (so the runtime
// must prove the UI's identity: other tests' stand-in UIs listen on this machine too) with a
// random UI port, its Spark conf given in the functionConfig.
const input = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: sparkui.dev/v1alpha1
  kind: SparkUIService
  metadata:
    name: sparkui
  spec:
    sparkConf:
      spark.ui.port: "0"
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: wordcount-driver
    namespace: NS
    labels:
      spark-app-selector: APPID
      spark-role: driver
  spec:
    nodeName: NS-node
    serviceAccountName: spark
    hostNetwork: true
    containers:
    - name: spark-kubernetes-driver
      image: apache/spark:4.1.0
      ports:
      - name: spark-ui
        containerPort: 0
- apiVersion: v1
  kind: ServiceAccount
  metadata:
    name: spark
    namespace: NS
`

// rendered is the function's output for one application.
type rendered struct {
	items   []*yaml.RNode
	stream  []byte   // the items as one YAML stream, what a pipeline applies
	args    []string // the runtime sidecar's args
	results string   // the results, as YAML
}

// renderList runs the built sparkui-fn on a ResourceList; it must exit 0.
func renderList(t *testing.T, in string) rendered { return renderListExit(t, in, false) }

// renderListExit is renderList; with errorsAllowed an exit status 1 (an error result, the
// items still written: README.md, On its own) is accepted, for inputs the tests deploy despite a finding.
func renderListExit(t *testing.T, in string, errorsAllowed bool) rendered {
	t.Helper()
	cmd := exec.Command(fnBin)
	cmd.Stdin = strings.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errorsAllowed && errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("sparkui-fn: %v\n%s\n%s", err, stderr.String(), out)
	}
	rl, err := yaml.Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	items, err := rl.Pipe(yaml.Lookup("items"))
	if err != nil {
		t.Fatal(err)
	}
	var r rendered
	if r.items, err = items.Elements(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(r.items); err != nil {
		t.Fatal(err)
	}
	r.stream = buf.Bytes()
	if res, _ := rl.Pipe(yaml.Lookup("results")); res != nil {
		r.results = res.MustString()
	}
	for _, it := range r.items {
		if it.GetKind() != "Pod" {
			continue
		}
		ctr, err := it.Pipe(yaml.Lookup("spec", "initContainers", "[name="+sidecar.ContainerName+"]", "args"))
		if err != nil || ctr == nil {
			t.Fatalf("no %s sidecar in the Pod: %v\n%s", sidecar.ContainerName, err, out)
		}
		for _, a := range ctr.YNode().Content {
			r.args = append(r.args, a.Value)
		}
	}
	return r
}

// render renders the re-apply test's input for namespace ns and app id appID.
func render(t *testing.T, ns, appID string) (stream []byte, args []string) {
	t.Helper()
	r := renderList(t, strings.NewReplacer("NS", ns, "APPID", appID).Replace(input))
	var kinds []string
	for _, it := range r.items {
		kinds = append(kinds, it.GetKind()+"/"+it.GetName())
	}
	sort.Strings(kinds)
	want := []string{"Pod/wordcount-driver", "Role/wordcount-ui-svc-binder", "RoleBinding/wordcount-ui-svc-binder",
		"Service/wordcount-ui-svc", "ServiceAccount/spark"}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("the function emitted %v, want %v", kinds, want)
	}
	return r.stream, r.args
}

type runtimeProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *runtimeProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *runtimeProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// kubectl runs kubectl against the cluster as an admin, as a pipeline does.
func kubectl(t *testing.T, kubeconfig string, manifests []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig=" + kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(manifests)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// appliers are the ways pipelines apply their output; each is used alone for one
// application, first to create it and then to re-apply, as one pipeline does.
var appliers = []applier{
	kubectlApplier("client-side", "kubectl-client-side-apply"),
	kubectlApplier("server-side", "ssa-pipeline", "--server-side", "--field-manager=ssa-pipeline"),
	argocdApplier("argocd-client-side", false),
	argocdApplier("argocd-server-side", true),
	fluxApplier("flux", false),
	fluxApplier("flux-force", true),
}

func TestReapplyKeepsBindAndWithdrawal(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	for i, a := range appliers {
		t.Run(a.name, func(t *testing.T) {
			reapply(t, c, a, fmt.Sprintf("192.0.2.%d", 41+i))
		})
	}
}

func reapply(t *testing.T, c *testcluster.Cluster, a applier, ip string) {
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns

	stream, args := render(t, ns, appID)
	t.Logf("runtime args as the function emits them: %v", args)
	const svc = "wordcount-ui-svc"

	addNode(t, c, ns+"-node")
	a.apply(t, c, stream)
	if got := service(t, c, ns, svc); len(got.selector) != 0 || got.targetPort != "4040" {
		t.Fatalf("as applied: %s, want no selector and targetPort defaulted to the port 4040", got)
	}

	pod := podReady(t, c, ns, "wordcount-driver", ip)
	// The waiting state a runtime that cannot bind writes: kept by a re-apply, no drift.
	waitingStatus := writeWaiting(t, c, ns, svc, appID, pod)
	noDrift(t, c, a, stream, ns, svc, "while waiting")
	out := a.apply(t, c, stream)
	keptStatus(t, c, ns, svc, waitingStatus, "while waiting, re-apply")
	noReportedChange(t, out, ns, svc, "while waiting")

	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()

	p, sock := startRuntime(t, c, pod, args)

	bound := svcState{selector: map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}, targetPort: fmt.Sprint(ui.Port)}
	testcluster.WaitFor(t, 20*time.Second, "the runtime's bind", func() (bool, string) {
		got := service(t, c, ns, svc)
		return got.String() == bound.String(), got.String() + "\n" + p.logs()
	})
	boundSlice := []string{fmt.Sprintf("%s:%d ready=true", ip, ui.Port)}
	waitEndpoints(t, c, ns, svc, boundSlice)

	if d := a.drift(t, c, olderOutput(t, stream)); d == "" {
		t.Errorf("%s's drift check sees nothing in an older output that declares targetPort 4040 (and has no Flux annotation) against the bound Service", a.name)
	} else {
		t.Logf("%s's drift check on an older output: %s", a.name, d)
	}
	boundStatus := uiStatus(t, c, ns, svc, "bound", pod.Name, ui.Port)
	for i := 1; i <= 2; i++ {
		noDrift(t, c, a, stream, ns, svc, "after the bind")
		out := a.apply(t, c, stream)
		keptStatus(t, c, ns, svc, boundStatus, fmt.Sprintf("after the bind, re-apply %d", i))
		if got := service(t, c, ns, svc); got.String() != bound.String() {
			t.Fatalf("after the bind, re-apply %d reset the Service: %s, want %s\n%s", i, got, bound, out)
		}
		noReportedChange(t, out, ns, svc, "after the bind")
		holdEndpoints(t, c, ns, svc, boundSlice, 2*time.Second)
	}
	noDrift(t, c, a, stream, ns, svc, "after the bind and the re-applies")
	checkOwners(t, c, ns, svc, a.manager)
	if a.createOnly {
		stream = rollServiceChange(t, c, a, ns, appID, svc, bound, boundSlice)
	}

	// Withdraw as the preStop hook does, then re-apply again: nothing may re-route.
	hook := sidecar.PreStopCommand()
	hook[0] = runtimeBin
	for i, a := range hook {
		if strings.HasPrefix(a, "--socket=") {
			hook[i] = "--socket=" + sock
		}
	}
	if out, err := exec.Command(hook[0], hook[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("preStop hook: %v\n%s\nruntime:\n%s", err, out, p.logs())
	}
	withdrawn := svcState{selector: map[string]string{names.WithdrawnSelectorKey: string(pod.UID)}, targetPort: fmt.Sprint(ui.Port)}
	if got := service(t, c, ns, svc); got.String() != withdrawn.String() {
		t.Fatalf("after the withdrawal: %s, want %s", got, withdrawn)
	}
	waitEndpoints(t, c, ns, svc, nil)
	withdrawnStatus := uiStatus(t, c, ns, svc, "withdrawn", pod.Name, 0)
	for i := 1; i <= 2; i++ {
		noDrift(t, c, a, stream, ns, svc, "after the withdrawal")
		out := a.apply(t, c, stream)
		keptStatus(t, c, ns, svc, withdrawnStatus, fmt.Sprintf("after the withdrawal, re-apply %d", i))
		if got := service(t, c, ns, svc); got.String() != withdrawn.String() {
			t.Fatalf("after the withdrawal, re-apply %d changed the Service: %s, want %s\n%s", i, got, withdrawn, out)
		}
		noReportedChange(t, out, ns, svc, "after the withdrawal")
		holdEndpoints(t, c, ns, svc, nil, 2*time.Second)
	}
	checkOwners(t, c, ns, svc, a.manager)
}

// noDrift: the applier's drift detection sees nothing to correct on the UI Service: a
// GitOps controller that saw the runtime's fields as drift would report the application out
// of sync forever, and correct it at every interval.
func noDrift(t *testing.T, c *testcluster.Cluster, a applier, stream []byte, ns, svc, when string) {
	t.Helper()
	if d := a.drift(t, c, stream); d != "" {
		t.Errorf("%s, %s reports drift on Service %s/%s:\n%s", when, a.name, ns, svc, d)
	}
}

// noReportedChange: a re-apply's own output does not say it changed the UI Service
// (kubectl's client-side `service/<name> configured`, Flux's change set `Service/<ns>/<name>
// configured`; a server-side kubectl apply prints serverside-applied either way).
func noReportedChange(t *testing.T, out, ns, svc, when string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "service/"+svc+" configured" || line == "Service/"+ns+"/"+svc+" configured" {
			t.Fatalf("%s, the re-apply reports it changed the UI Service:\n%s", when, out)
		}
	}
}

// checkOwners: in the Service's managedFields the pipeline's manager owns exactly what the
// manifests declare, the runtime (and only it) owns targetPort, the selector and the
// ownerReference. This is what a GitOps tool sees: the runtime's fields are nobody else's.
func checkOwners(t *testing.T, c *testcluster.Cluster, ns, svc, manager string) {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, mf := range s.ManagedFields {
		fields := mf.FieldsV1.GetRawString()
		for _, f := range []string{`"f:selector"`, `"f:targetPort"`, `"f:ownerReferences"`} {
			if strings.Contains(fields, f) {
				owners[f] += mf.Manager + " "
			}
		}
		if mf.Manager == manager && !strings.Contains(fields, `"f:ports"`) {
			t.Errorf("%s does not own the ports it declares: %s", manager, fields)
		}
	}
	want := map[string]string{`"f:selector"`: "sparkui-runtime ", `"f:targetPort"`: "sparkui-runtime ", `"f:ownerReferences"`: "sparkui-runtime "}
	if fmt.Sprint(owners) != fmt.Sprint(want) {
		t.Errorf("owners of the runtime's fields: %v, want %v", owners, want)
	}
}

func addNode(t *testing.T, c *testcluster.Cluster, name string) {
	t.Helper()
	if _, err := c.Client.CoreV1().Nodes().Create(testcluster.Context(t, 10*time.Second), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podReady does the kubelet's part: the applied Pod runs and is Ready, with address ip
// (hostNetwork: the node's address), through the status subresource.
func podReady(t *testing.T, c *testcluster.Cluster, ns, name, ip string) *corev1.Pod {
	t.Helper()
	ctx := testcluster.Context(t, 30*time.Second)
	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: ip,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}}
	if pod, err = c.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

// startRuntime runs the built runtime with args (the emitted sidecar's), as the driver's
// ServiceAccount "spark" of pod's namespace, with the downward-API env of pod. Only the paths of
// its emptyDir and termination log are moved to a temporary directory, as the runtime's own
// binary test does. It returns the process and its unix socket (for the preStop hook).
func startRuntime(t *testing.T, c *testcluster.Cluster, pod *corev1.Pod, args []string) (*runtimeProc, string) {
	t.Helper()
	shared, err := os.MkdirTemp("", "sui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shared) })
	sock := filepath.Join(shared, "runtime.sock")
	runArgs := append(append([]string{}, args...), "--socket="+sock, "--install="+filepath.Join(shared, "sparkui-runtime"),
		"--state-file="+filepath.Join(shared, "bound-port"), "--termination-log="+filepath.Join(shared, "termination-log"))
	p := &runtimeProc{cmd: exec.Command(runtimeBin, runArgs...), done: make(chan struct{})}
	p.cmd.Env = append(podEnviron(), "KUBECONFIG="+c.KubeconfigFile(t, c.ServiceAccountConfig(t, pod.Namespace, "spark")),
		"POD_NAME="+pod.Name, "POD_NAMESPACE="+pod.Namespace, "POD_UID="+string(pod.UID))
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p, sock
}

// podEnviron is this process's environment without the SPARKUI_* variables the test harness
// sets (the Makefile exports SPARKUI_CACHE and SPARKUI_KUSTOMIZE for the tools): the runtime
// reports every SPARKUI_* name it does not know, and in a Pod it has only the container's.
func podEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SPARKUI_") {
			out = append(out, kv)
		}
	}
	return out
}
