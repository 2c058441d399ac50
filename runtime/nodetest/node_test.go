// Package nodetest runs the function's output on a real node (testkit/testnode): the
// kubelet starts the driver Pod with the runtime as a native sidecar, probes it, runs the
// preStop hook and sends SIGTERM; the control plane's controllers fill the EndpointSlices and
// collect the UI Service with the Pod. The driver container runs a stand-in Spark UI
// (runtime/internal/fakespark/cmd/fakespark-ui) imported under the image name the manifests
// carry, so the manifests run as they are.
package nodetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// RuntimeImage is the runtime's image on the node, built from ./runtime.
const RuntimeImage = "sparkui.test/sparkui-runtime:1"

// RuntimeImage2 is the same runtime under another tag: a sparkui upgrade's image change.
const RuntimeImage2 = "sparkui.test/sparkui-runtime:2"

// startNode builds the images (runtime, stand-in Spark UI as each image name in sparkImages)
// and starts a node.
func startNode(t *testing.T, sparkImages ...string) *testnode.Node {
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
	for _, ref := range sparkImages {
		imgs = append(imgs, testnode.Image{Ref: ref, Name: "fakespark-ui", Binary: ui})
	}
	return testnode.Start(t, testnode.Options{Images: imgs})
}

// render runs the built function on an example with the runtime image set to RuntimeImage.
func render(t *testing.T, example string) []*unstructured.Unstructured {
	t.Helper()
	fn, err := testnode.BuildGo("./fn")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "sparkui-fn")
	if err := os.WriteFile(bin, fn, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "..", "examples", example)
	cfg, err := os.ReadFile(filepath.Join(src, "fn-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = regexp.MustCompile(`(?m)^(\s*image:\s*).*$`).ReplaceAll(cfg, []byte("${1}"+RuntimeImage))
	cfgPath := filepath.Join(dir, "fn-config.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, cfgPath, filepath.Join(src, "manifests.yaml"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sparkui-fn on %s: %v\n%s", example, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(out), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("output document: %v\n%s", err, doc)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs
}

// create creates objs in order, making the ServiceAccounts their Pods name.
func create(t *testing.T, n *testnode.Node, objs []*unstructured.Unstructured) {
	t.Helper()
	c := n.Cluster
	ctx := testcluster.Context(t, time.Minute)
	for _, o := range objs {
		if o.GetNamespace() != "" {
			n.PrepareNamespace(t, o.GetNamespace())
		}
		if o.GetKind() == "Pod" {
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "serviceAccountName")
			if sa != "" && sa != "default" {
				_, err := c.Client.CoreV1().ServiceAccounts(o.GetNamespace()).Create(ctx,
					&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
			}
		}
	}
	for _, o := range objs {
		m, err := c.Mapping(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// svcState is the UI Service as a watch saw it at one instant.
type svcState struct {
	At         time.Time
	Selector   map[string]string
	TargetPort string
	Gone       bool
}

func (s svcState) String() string {
	if s.Gone {
		return s.At.Format("15:04:05.000") + " deleted"
	}
	return fmt.Sprintf("%s selector=%v targetPort=%s", s.At.Format("15:04:05.000"), s.Selector, s.TargetPort)
}

// timeline records every state of one Service from a watch started before it exists.
type timeline struct {
	mu     sync.Mutex
	states []svcState
	stop   func()
}

func watchService(t *testing.T, n *testnode.Node, ns, name string) *timeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := n.Cluster.Client.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tl := &timeline{stop: cancel}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			svc, ok := ev.Object.(*corev1.Service)
			if !ok {
				continue
			}
			st := svcState{At: now, Selector: svc.Spec.Selector, Gone: ev.Type == watch.Deleted}
			if len(svc.Spec.Ports) > 0 {
				st.TargetPort = svc.Spec.Ports[0].TargetPort.String()
			}
			tl.mu.Lock()
			tl.states = append(tl.states, st)
			tl.mu.Unlock()
		}
	}()
	t.Cleanup(cancel)
	return tl
}

func (tl *timeline) snapshot() []svcState {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]svcState(nil), tl.states...)
}

// first is the first state matching ok.
func (tl *timeline) first(ok func(svcState) bool) (svcState, bool) {
	for _, s := range tl.snapshot() {
		if ok(s) {
			return s, true
		}
	}
	return svcState{}, false
}

func (tl *timeline) String() string {
	var b strings.Builder
	for _, s := range tl.snapshot() {
		b.WriteString("\n  " + s.String())
	}
	return b.String()
}

// sliceEndpoints lists the Service's EndpointSlice endpoints as "ip:port ready=bool".
func sliceEndpoints(ctx context.Context, n *testnode.Node, ns, svc string) ([]string, error) {
	l, err := n.Cluster.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			for _, p := range s.Ports {
				ready := e.Conditions.Ready != nil && *e.Conditions.Ready
				out = append(out, fmt.Sprintf("%s:%d ready=%t", strings.Join(e.Addresses, ","), *p.Port, ready))
			}
		}
	}
	return out, nil
}

// logLine waits for a line of the container's log matching re and returns its submatches.
// It polls fast: a deleted Pod's logs go with its containers.
func logLine(t *testing.T, n *testnode.Node, ns, pod, ctr string, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	return logLineOf(t, n, ns, pod, "*", ctr, re, timeout)
}

// logLineOf is logLine for the Pod with that UID only (a replacement Pod of the same name).
func logLineOf(t *testing.T, n *testnode.Node, ns, pod, uid, ctr string, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	var m []string
	testcluster.WaitFor(t, timeout, fmt.Sprintf("%q in the log of %s/%s", re, pod, ctr), func() (bool, string) {
		log, err := n.PodLogOf(ns, pod, uid, ctr)
		if err != nil {
			return false, err.Error()
		}
		m = re.FindStringSubmatch(log)
		return m != nil, log
	})
	return m
}

func get(t *testing.T, n *testnode.Node, url string) (int, string, error) {
	t.Helper()
	resp, err := n.HTTPClient(3 * time.Second).Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// podWhy summarises why a Pod is not as wanted yet.
func podWhy(p *corev1.Pod) string {
	var b strings.Builder
	b.WriteString(string(p.Status.Phase) + "; ")
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "%s restarts=%d", cs.Name, cs.RestartCount)
		if w := cs.State.Waiting; w != nil {
			b.WriteString(" waiting: " + w.Reason + " " + w.Message)
		}
		if x := cs.State.Terminated; x != nil {
			b.WriteString(" terminated: " + x.Reason)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// withdrawnAtSigterm asserts the stand-in UI's own request in its SIGTERM handler found the
// Service withdrawn for this Pod: the kubelet told the UI to stop only after the withdrawal
// was acknowledged (preStop first). No clock is compared.
func withdrawnAtSigterm(t *testing.T, n *testnode.Node, ns, pod, uid string, tl *timeline) {
	t.Helper()
	got := logLine(t, n, ns, pod, "spark-kubernetes-driver", regexp.MustCompile(`service-at-sigterm (.*)`), 30*time.Second)[1]
	if want := `{"sparkui.dev/withdrawn":"` + uid + `"}`; got != want {
		t.Errorf("when the UI got SIGTERM the API server had the Service's selector %s, want the withdrawn %s; timeline:%s", got, want, tl)
	}
}
