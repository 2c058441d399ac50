// Package scale runs many applications at once against the test control plane, each a real
// sparkui-runtime with the stand-in Spark UI in a network of its own as in a Pod, and measures
// what they cost: bind and withdrawal latency, the API requests of each application (from the
// API server's audit log), the API server's CPU and memory, EndpointSlice changes, and the
// runtime's CPU and memory (docs/performance.md "At scale"; issue 33).
//
// The applications are spark-submit driver Pods rendered by the built sparkui-fn from
// testdata/fixed-port (one copy per application, its names, application id and ServiceAccount
// made unique), created as rendered, each Pod given an IP and Ready through the status
// subresource (the kubelet's part), and its sparkui-runtime container run as the kubelet would
// run it (args expanded from its env, the env from the Pod) next to the stand-in driver
// (runtime/internal/fakespark/cmd/fakespark-ui), both in `unshare -rn` (testkit/podnet).
package scale

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// auditPolicy records every request a ServiceAccount makes (the runtimes are the only ones
// here), at Metadata level; nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`

// Bins are the binaries a run needs, built as `make build` builds them (CGO off, -trimpath).
type Bins struct {
	Fn, Runtime, UI, Podnet string
}

// moduleDir is the repository's root, from the go command.
func moduleDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Build builds sparkui-fn, sparkui-runtime, the stand-in driver and podnet into a temporary
// directory of t.
func Build(t testing.TB) Bins {
	t.Helper()
	root, dir := moduleDir(t), t.TempDir()
	b := Bins{Fn: filepath.Join(dir, "sparkui-fn"), Runtime: filepath.Join(dir, "sparkui-runtime"),
		UI: filepath.Join(dir, "fakespark-ui"), Podnet: filepath.Join(dir, "podnet")}
	for out, pkg := range map[string]string{b.Fn: "./fn", b.Runtime: "./runtime",
		b.UI: "./runtime/internal/fakespark/cmd/fakespark-ui", b.Podnet: "./testkit/podnet/cmd/podnet"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
		}
	}
	return b
}

// Cluster starts the control plane of a run: kube-apiserver with the audit log, and
// kube-controller-manager with testcluster's default controllers (EndpointSlice, Endpoints,
// EndpointSlice mirroring, garbage collector). It returns the cluster and the audit log's path.
// The audit backend is blocking: every runtime request is on disk when its answer is sent, so
// the counts are complete the moment the run ends (it costs the API server a write per
// audited request, which the figures include).
func Cluster(t testing.TB, extraArgs map[string][]string) (*testcluster.Cluster, string) {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "audit.log")
	// envtest's Service range, 10.0.0.0/24, holds 254 ClusterIPs, one per application (its UI
	// Service; the driver's headless Service takes none): the 254th failed "range is full". A
	// /16 holds 65,534.
	args := map[string][]string{"audit-policy-file": {policy}, "audit-log-path": {log}, "audit-log-mode": {"blocking"},
		"service-cluster-ip-range": {"10.0.0.0/16"}}
	for k, v := range extraArgs {
		args[k] = v
	}
	return testcluster.Start(t, testcluster.Options{ControllerManager: true, APIServerArgs: args}), log
}

// The names testdata/fixed-port/input.yaml gives its one application, made unique per copy.
var (
	itemsStart  = regexp.MustCompile(`(?m)^items:\n`)
	saLine      = regexp.MustCompile(`(?m)^(\s*serviceAccount(Name)?: )spark$`)
	saProp      = regexp.MustCompile(`(?m)^(\s*spark\.kubernetes\.authenticate\.driver\.serviceAccountName=)spark$`)
	replaceName = strings.NewReplacer(
		"wordcount-5b2d0c9e1f3a7b64", "{prefix}",
		"spark-7e0d4c1a9b2f4e6d8c3b5a7f9e1d2c4b", "{appid}",
		"spark-drv-9c1e7b3a5d2f4086", "spark-drv-{hex}",
		"namespace: analytics", "namespace: {ns}",
		"spark.kubernetes.namespace: analytics", "spark.kubernetes.namespace: {ns}",
		"spark.kubernetes.namespace=analytics", "spark.kubernetes.namespace={ns}",
		".analytics.svc", ".{ns}.svc",
	)
)

// App names one application of a run.
type App struct {
	Index          int
	Prefix, AppID  string // the spark-submit prefix (UI Service <prefix>-ui-svc) and spark.app.id
	ServiceAccount string
}

// UIService is the application's UI Service.
func (a App) UIService() string { return a.Prefix + "-ui-svc" }

// PodName is the driver Pod's name.
func (a App) PodName() string { return a.Prefix + "-driver" }

// NewApp is application i of namespace ns.
func NewApp(i int) App {
	return App{Index: i, Prefix: fmt.Sprintf("scale-%05d", i), AppID: fmt.Sprintf("spark-scale%05d", i),
		ServiceAccount: fmt.Sprintf("spark-%05d", i)}
}

// Input is a ResourceList of n copies of testdata/fixed-port's application in namespace ns,
// application i named by NewApp(first+i).
func Input(t testing.TB, ns string, first, n int) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(moduleDir(t), "testdata", "fixed-port", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	loc := itemsStart.FindIndex(src)
	if loc == nil {
		t.Fatal("testdata/fixed-port/input.yaml: no items")
	}
	head, item := string(src[:loc[1]]), string(src[loc[1]:])
	item = replaceName.Replace(item)
	item = saLine.ReplaceAllString(item, "${1}{sa}")
	item = saProp.ReplaceAllString(item, "${1}{sa}")
	var b bytes.Buffer
	b.WriteString(head)
	for i := first; i < first+n; i++ {
		a := NewApp(i)
		b.WriteString(strings.NewReplacer("{prefix}", a.Prefix, "{appid}", a.AppID, "{hex}", fmt.Sprintf("%016x", i),
			"{ns}", ns, "{sa}", a.ServiceAccount).Replace(item))
	}
	return b.String()
}

// Render runs the built sparkui-fn on in; it must exit 0.
func Render(t testing.TB, fn, in string) []byte {
	t.Helper()
	cmd := exec.Command(fn)
	cmd.Stdin = strings.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sparkui-fn: %v\n%s", err, stderr.String())
	}
	return out
}
