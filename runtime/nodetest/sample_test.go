package nodetest

// sample_test.go: what the fault tests of oom_test.go, hostports_test.go and
// gateway_test.go share: the UI Service's EndpointSlice sampled on a clock (a watch on the
// Service shows the selector; what kube-proxy and a Gateway route to is the EndpointSlice),
// the function run on an input of the test's own, and edits of a driver container.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/testkit/testnode"
)

// slicePoll is how often the EndpointSlice is sampled.
const slicePoll = 50 * time.Millisecond

// sliceSample is the Service's EndpointSlice endpoints at one instant ("ip:port ready=bool").
type sliceSample struct {
	At  time.Time
	Eps []string
}

func (s sliceSample) String() string {
	return fmt.Sprintf("%s [%s]", s.At.Format("15:04:05.000"), strings.Join(s.Eps, " "))
}

// sliceSamples records every change of a Service's EndpointSlice endpoints, read every
// slicePoll from before the Service exists until the test ends.
type sliceSamples struct {
	mu      sync.Mutex
	samples []sliceSample
}

func sampleSlices(t *testing.T, n *testnode.Node, ns, svc string) *sliceSamples {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ss := &sliceSamples{}
	go func() {
		defer close(done)
		last := "\x00"
		for ctx.Err() == nil {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			eps, err := sliceEndpoints(rctx, n, ns, svc)
			rcancel()
			if err == nil {
				if key := strings.Join(eps, " "); key != last {
					last = key
					ss.mu.Lock()
					ss.samples = append(ss.samples, sliceSample{At: time.Now(), Eps: eps})
					ss.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(slicePoll):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ss
}

func (ss *sliceSamples) snapshot() []sliceSample {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]sliceSample(nil), ss.samples...)
}

// first is the first sample matching ok, at or after from.
func (ss *sliceSamples) first(from time.Time, ok func([]string) bool) (sliceSample, bool) {
	for _, s := range ss.snapshot() {
		if !s.At.Before(from) && ok(s.Eps) {
			return s, true
		}
	}
	return sliceSample{}, false
}

func (ss *sliceSamples) String() string {
	var b strings.Builder
	for _, s := range ss.snapshot() {
		b.WriteString("\n  " + s.String())
	}
	return b.String()
}

// only reports whether eps is exactly one endpoint, want ("ip:port"), whatever its readiness.
func only(eps []string, want string) bool {
	return len(eps) == 1 && strings.HasPrefix(eps[0], want+" ")
}

// renderInput runs the built function standalone on a functionConfig and manifests of the
// test's own (the examples' files, edited), with the runtime image set to RuntimeImage.
func renderInput(t *testing.T, cfg, manifests string) []*unstructured.Unstructured {
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
	cfg = regexp.MustCompile(`(?m)^(\s*image:\s*).*$`).ReplaceAllString(cfg, "${1}"+RuntimeImage)
	cfgPath, inPath := filepath.Join(dir, "fn-config.yaml"), filepath.Join(dir, "manifests.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inPath, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, cfgPath, inPath)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sparkui-fn: %v\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(out), -1) {
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

// example reads a file of examples/.
func example(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// editDriver changes the spark-kubernetes-driver container of a rendered Pod with f, which gets
// the container and the mount path of its spark-local-dir volume (an emptyDir: it outlives
// the container, so a fault marked there happens once per Pod).
func editDriver(t *testing.T, pod *unstructured.Unstructured, f func(c map[string]any, localDir string)) {
	t.Helper()
	ctrs, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	found := false
	for i, c := range ctrs {
		m := c.(map[string]any)
		if m["name"] != "spark-kubernetes-driver" {
			continue
		}
		var dir string
		mounts, _ := m["volumeMounts"].([]any)
		for _, vm := range mounts {
			if v := vm.(map[string]any); strings.HasPrefix(v["name"].(string), "spark-local-dir-") {
				dir = v["mountPath"].(string)
			}
		}
		if dir == "" {
			t.Fatal("the driver container mounts no spark-local-dir volume")
		}
		f(m, dir)
		ctrs[i], found = m, true
	}
	if !found {
		t.Fatal("no spark-kubernetes-driver container in the Pod")
	}
	if err := unstructured.SetNestedSlice(pod.Object, ctrs, "spec", "containers"); err != nil {
		t.Fatal(err)
	}
}

// addEnv appends environment variables to a container.
func addEnv(c map[string]any, kv ...string) {
	env, _ := c["env"].([]any)
	for i := 0; i+1 < len(kv); i += 2 {
		env = append(env, map[string]any{"name": kv[i], "value": kv[i+1]})
	}
	c["env"] = env
}

// startNodeWith is startNode with the node's options and further images.
func startNodeWith(t *testing.T, opts testnode.Options, extra []testnode.Image, sparkImages ...string) *testnode.Node {
	t.Helper()
	opts.Images = append(append([]testnode.Image{{Ref: RuntimeImage, Name: "sparkui-runtime", Binary: mustBuild(t, "./runtime")}}, extra...), opts.Images...)
	ui := mustBuild(t, "./runtime/internal/fakespark/cmd/fakespark-ui")
	for _, ref := range sparkImages {
		opts.Images = append(opts.Images, testnode.Image{Ref: ref, Name: "fakespark-ui", Binary: ui})
	}
	return testnode.Start(t, opts)
}

// mustBuild is testnode.BuildGo, failing the test.
func mustBuild(t *testing.T, pkg string) []byte {
	t.Helper()
	b, err := testnode.BuildGo(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile creates an empty file (a signal to a container through its emptyDir).
func writeFile(path string) error { return os.WriteFile(path, nil, 0o644) }
