package blackbox

import (
	"bytes"
	"context"
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
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

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

type svcState struct {
	selector   map[string]string
	targetPort string
}

func (s svcState) String() string {
	return fmt.Sprintf("selector %v, targetPort %s", s.selector, s.targetPort)
}

func service(t *testing.T, c *testcluster.Cluster, ns, name string) svcState {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Ports) != 1 {
		t.Fatalf("Service ports %+v, want one", s.Spec.Ports)
	}
	return svcState{selector: s.Spec.Selector, targetPort: s.Spec.Ports[0].TargetPort.String()}
}

// endpoints lists "ip:port ready=…" of every endpoint in the Service's EndpointSlices, sorted.
func endpoints(ctx context.Context, c *testcluster.Cluster, ns, svc string) ([]string, error) {
	list, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			for _, addr := range ep.Addresses {
				for _, p := range s.Ports {
					port := int32(0)
					if p.Port != nil {
						port = *p.Port
					}
					out = append(out, fmt.Sprintf("%s:%d ready=%t", addr, port, ep.Conditions.Ready != nil && *ep.Conditions.Ready))
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func waitEndpoints(t *testing.T, c *testcluster.Cluster, ns, svc string, want []string) {
	t.Helper()
	testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("EndpointSlices of %s = %v", svc, want), func() (bool, string) {
		got, err := endpoints(testcluster.Context(t, 10*time.Second), c, ns, svc)
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
}

// holdEndpoints checks the slices keep want for d: after a re-apply that reset the Service
// the EndpointSlice controller rewrites them within milliseconds.
func holdEndpoints(t *testing.T, c *testcluster.Cluster, ns, svc string, want []string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		got, err := endpoints(testcluster.Context(t, 10*time.Second), c, ns, svc)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("EndpointSlices of %s became %v, want %v", svc, got, want)
		}
	}
}

// appliers are the ways pipelines apply their output; each is used alone for one
// application, first to create it and then to re-apply, as one pipeline does.

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
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+c.KubeconfigFile(t, c.ServiceAccountConfig(t, pod.Namespace, "spark")),
		"POD_NAME="+pod.Name, "POD_NAMESPACE="+pod.Namespace, "POD_UID="+string(pod.UID))
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p, sock
}
