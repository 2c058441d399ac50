package blackbox

// argocd_test.go: Argo CD's two sync paths, run by Argo CD's own engine.
//
// github.com/argoproj/argo-cd/gitops-engine (the one version the Go proxy serves that builds
// with Go 1.26) is compiled into testkit/argocdengine, a module of its own: it builds only
// against the k8s.io 0.36 modules it pins, sparkui is on 0.37 (docs/deploy-argocd.md). The test
// builds that command once and drives it like kubectl: `argocd-engine sync` is one sync
// operation of an Application holding the function's output (pkg/cache for the live state,
// pkg/diff, pkg/sync with the options argo-cd's controller/sync.go gives a default sync, field
// manager argocd-controller), `argocd-engine compare` is the controller's refresh: what the
// Application and each resource would show, Synced or OutOfSync, with the fields that differ.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/argocdcmp"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// argoReport is argocd-engine's output (testkit/argocdengine/main.go, type report).
type argoReport struct {
	Status    string `json:"status"`
	Resources []struct {
		Kind   string   `json:"kind"`
		Name   string   `json:"name"`
		Status string   `json:"status"`
		Diff   []string `json:"diff"`
	} `json:"resources"`
	Phase   string `json:"phase"`
	Message string `json:"message"`
	Results []struct {
		Kind    string `json:"kind"`
		Name    string `json:"name"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"results"`
}

var argoEngine struct {
	once gosync.Once
	bin  string
	err  error
}

// argocdEngineBin builds testkit/argocdengine once per test binary (its own module, so its
// own go.mod and go.sum: `go build` in its directory).
func argocdEngineBin(t *testing.T) string {
	t.Helper()
	argoEngine.once.Do(func() {
		dir, err := os.MkdirTemp("", "sparkui-argocd-engine-")
		if err != nil {
			argoEngine.err = err
			return
		}
		argoEngine.bin = filepath.Join(dir, "argocd-engine")
		start := time.Now()
		build := exec.Command("go", "build", "-o", argoEngine.bin, ".")
		build.Dir = filepath.Join("..", "..", "testkit", "argocdengine")
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			argoEngine.err = fmt.Errorf("building testkit/argocdengine (cd testkit/argocdengine && go build .): %v\n%s", err, out)
			return
		}
		t.Logf("built argocd-engine in %s", time.Since(start).Round(time.Second))
	})
	if argoEngine.err != nil {
		t.Fatal(argoEngine.err)
	}
	return argoEngine.bin
}

// argocd runs argocd-engine VERB for Application app in ns on stream; a sync that does not
// succeed fails the test.
func argocd(t *testing.T, c *testcluster.Cluster, verb, app, ns string, stream []byte, flags ...string) argoReport {
	t.Helper()
	args := append([]string{verb, "--kubeconfig=" + c.KubeconfigFile(t, c.Config), "--app=" + app, "--namespace=" + ns}, flags...)
	cmd := exec.Command(argocdEngineBin(t), args...)
	cmd.Stdin = bytes.NewReader(stream)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var r argoReport
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil {
		t.Fatalf("argocd-engine %s: %v %v\n%s\nstderr (the engine's log):\n%s", strings.Join(args, " "), err, jerr, out, lastLines(stderr.String(), 40))
	}
	return r
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// outOfSync lists the resources the comparison reports OutOfSync, with their differing fields;
// "" when the Application is Synced.
func (r argoReport) outOfSync() string {
	var b strings.Builder
	for _, res := range r.Resources {
		if res.Status != "Synced" {
			fmt.Fprintf(&b, "%s/%s %s\n", res.Kind, res.Name, res.Status)
			for _, d := range res.Diff {
				fmt.Fprintf(&b, "  %s\n", d)
			}
		}
	}
	if b.Len() == 0 && r.Status != "Synced" {
		return "Application " + r.Status
	}
	return b.String()
}

// argocdFlags are an Application's options: ServerSideApply=true in its sync options or not.
// Compare runs twice per drift check: with the diff Argo CD uses by default for that
// Application (the legacy three-way diff, or the structured-merge diff for a server-side apply
// Application) and with ServerSideDiff=true (a server-side dry-run apply as argocd-controller).
func argocdFlags(ssa bool) []string {
	if ssa {
		return []string{"--server-side-apply"}
	}
	return nil
}

// argocdApplier is an Application that syncs the function's output with Argo CD's engine.
func argocdApplier(name string, ssa bool) applier {
	const app = "sparkui"
	return applier{name: name, manager: "argocd-controller",
		apply: func(t *testing.T, c *testcluster.Cluster, stream []byte) string {
			t.Helper()
			r := argocd(t, c, "sync", app, namespaceOf(t, stream), stream, argocdFlags(ssa)...)
			// One line per resource, the message of gitops-engine's kubectl apply
			// ("service/<name> configured", "… unchanged", "… serverside-applied"): what
			// noReportedChange reads.
			var b strings.Builder
			fmt.Fprintf(&b, "phase %s: %s\n", r.Phase, r.Message)
			for _, res := range r.Results {
				fmt.Fprintf(&b, "%s\n", res.Message)
			}
			return b.String()
		},
		drift: func(t *testing.T, c *testcluster.Cluster, stream []byte) string {
			t.Helper()
			ns := namespaceOf(t, stream)
			d := argocd(t, c, "compare", app, ns, stream, argocdFlags(ssa)...).outOfSync()
			if ssd := argocd(t, c, "compare", app, ns, stream, append(argocdFlags(ssa), "--server-side-diff")...).outOfSync(); ssd != "" {
				d += "with ServerSideDiff=true:\n" + ssd
			}
			return d
		}}
}

// namespaceOf is the namespace of the UI Service of stream: each application of the
// re-apply tests lives in one namespace, the Application's destination.
func namespaceOf(t *testing.T, stream []byte) string {
	t.Helper()
	for _, l := range strings.Split(string(uiServiceDoc(t, stream)), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "namespace: "); ok {
			return v
		}
	}
	t.Fatalf("no namespace in the UI Service of\n%s", stream)
	return ""
}

// TestArgoCDSelfHealKeepsRuntimeFields: an Application with automated sync and selfHeal, on a
// NodePort UI Service whose URI the runtime resolves. After the bind, every field the runtime
// wrote — the selector, targetPort, the ownerReference to the driver Pod and the
// resolved-external-uri annotation — must leave the Application Synced (otherwise selfHeal
// would sync forever). Then someone edits a field the manifests declare (a label of the UI
// Service): the Application goes OutOfSync on that field alone, selfHeal's sync puts it back,
// and the runtime's four fields are all still there.
func TestArgoCDSelfHealKeepsRuntimeFields(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	for i, ssa := range []bool{false, true} {
		name := "client-side"
		if ssa {
			name = "ServerSideApply=true"
		}
		t.Run(name, func(t *testing.T) { argoSelfHeal(t, c, ssa, fmt.Sprintf("192.0.2.%d", 61+i)) })
	}
}

func argoSelfHeal(t *testing.T, c *testcluster.Cluster, ssa bool, ip string) {
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	const svc, app = "wordcount-ui-svc", "sparkui"
	nodePort := strings.Replace(input, "  spec:\n    sparkConf:", "  spec:\n    service:\n      type: NodePort\n      externalURI: nodePort\n    sparkConf:", 1)
	r := renderList(t, strings.NewReplacer("NS", ns, "APPID", appID).Replace(nodePort))
	addNode(t, c, ns+"-node")
	flags := argocdFlags(ssa)

	first := argocd(t, c, "sync", app, ns, r.stream, flags...)
	if first.Phase != "Succeeded" || len(first.Results) != 5 {
		t.Fatalf("first sync: %+v", first)
	}
	if d := argocd(t, c, "compare", app, ns, r.stream, flags...).outOfSync(); d != "" {
		t.Fatalf("right after the first sync the Application is not Synced:\n%s", d)
	}

	pod := podReady(t, c, ns, "wordcount-driver", ip)
	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	t.Setenv("HOST_IP", ip) // the downward API's status.hostIP, for the nodePort URI
	p, _ := startRuntime(t, c, pod, r.args)

	var bound *corev1.Service
	testcluster.WaitFor(t, 20*time.Second, "the runtime's bind and resolved URI", func() (bool, string) {
		s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		bound = s
		return s.Annotations[names.AnnotationResolvedExternalURI] != "" && len(s.OwnerReferences) == 1, fmt.Sprintf("%v %v\n%s", s.Annotations, s.OwnerReferences, p.logs())
	})
	want := runtimeFields{
		selector:   fmt.Sprint(map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}),
		targetPort: fmt.Sprint(ui.Port),
		owner:      "Pod/wordcount-driver/" + string(pod.UID),
		uri:        fmt.Sprintf("http://%s:%d", ip, bound.Spec.Ports[0].NodePort),
		// The status annotations the bind wrote (docs/service-status.md), since included: kept
		// by the compare below (no drift) and by selfHeal's sync.
		status: uiStatus(t, c, ns, svc, "bound", pod.Name, ui.Port),
	}
	if got := runtimeFieldsOf(bound); got != want {
		t.Fatalf("after the bind: %+v, want %+v", got, want)
	}

	// Refresh after the bind: nothing to heal, with either diff.
	for _, f := range [][]string{flags, append(flags, "--server-side-diff")} {
		if d := argocd(t, c, "compare", app, ns, r.stream, f...).outOfSync(); d != "" {
			t.Fatalf("after the bind, Argo CD (%v) reports the Application OutOfSync; selfHeal would sync it at every refresh:\n%s", f, d)
		}
	}

	// Someone edits a declared field by hand.
	label := "app.kubernetes.io/managed-by"
	if _, ok := bound.Labels[label]; !ok {
		t.Fatalf("the UI Service has no %s label to edit: %v", label, bound.Labels)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"someone"}}}`, label)
	if _, err := c.Client.CoreV1().Services(ns).Patch(testcluster.Context(t, 10*time.Second), svc, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	cmp := argocd(t, c, "compare", app, ns, r.stream, flags...)
	var svcDiff []string
	for _, res := range cmp.Resources {
		if res.Kind == "Service" {
			svcDiff = res.Diff
		}
	}
	if cmp.Status != "OutOfSync" || len(svcDiff) != 1 || !strings.HasPrefix(svcDiff[0], ".metadata.labels."+label+": live=\"someone\"") {
		t.Fatalf("after a hand edit of %s: %s\n%s, want OutOfSync on that label alone", label, cmp.Status, cmp.outOfSync())
	}

	// selfHeal: the controller syncs the OutOfSync Application.
	heal := argocd(t, c, "sync", app, ns, r.stream, flags...)
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Labels[label] == "someone" {
		t.Fatalf("selfHeal's sync did not restore %s: %v\n%+v", label, s.Labels, heal)
	}
	if got := runtimeFieldsOf(s); got != want {
		t.Fatalf("selfHeal's sync changed the runtime's fields: %+v, want %+v\n%+v", got, want, heal)
	}
	waitEndpoints(t, c, ns, svc, []string{fmt.Sprintf("%s:%d ready=true", ip, ui.Port)})
	if d := argocd(t, c, "compare", app, ns, r.stream, flags...).outOfSync(); d != "" {
		t.Fatalf("after selfHeal the Application is still OutOfSync:\n%s", d)
	}
	checkOwners(t, c, ns, svc, "argocd-controller")
}

type runtimeFields struct{ selector, targetPort, owner, uri, status string }

func runtimeFieldsOf(s *corev1.Service) runtimeFields {
	f := runtimeFields{selector: fmt.Sprint(s.Spec.Selector), uri: s.Annotations[names.AnnotationResolvedExternalURI], status: statusOf(s)}
	if len(s.Spec.Ports) > 0 {
		f.targetPort = s.Spec.Ports[0].TargetPort.String()
	}
	for _, o := range s.OwnerReferences {
		f.owner += o.Kind + "/" + o.Name + "/" + string(o.UID)
	}
	return f
}

// TestArgoCDPluginSync: sparkui's config management plugin end to end, but for the gRPC hop
// between the repo server and argocd-cmp-server (which cannot be built here): the plugin's
// generate runs as the cmp-server runs it (testkit/argocdcmp) on cmp/testdata's repository,
// with the Application's namespace written into the kustomization as a user would; its output
// is cmp/testdata/expected.yaml in that namespace; Argo CD's engine syncs it (the default
// client-side sync and ServerSideApply=true, one Application each) and then reports the
// Application Synced.
func TestArgoCDPluginSync(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	bin := filepath.Dir(fnBin) // holds sparkui-fn, which sparkui-cmp runs from PATH
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bin, "sparkui-cmp"), "../../cmp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmp: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	plugin, err := argocdcmp.Read("../../cmp/plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../../cmp/testdata/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, ssa := range []bool{false, true} {
		t.Run(fmt.Sprintf("ServerSideApply=%t", ssa), func(t *testing.T) {
			ns := c.UniqueNamespace(t)
			repo := t.TempDir()
			copyDir(t, "../../cmp/testdata/repo", repo)
			app := filepath.Join(repo, "apps", "wordcount")
			k, err := os.ReadFile(filepath.Join(app, "kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(app, "kustomization.yaml"), bytes.Replace(k, []byte("namespace: spark-jobs"), []byte("namespace: "+ns), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			env := argocdcmp.App{Name: "wordcount", Namespace: ns, Project: "default", Revision: "3f2a9c1e5b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a",
				RepoURL: "https://git.example.com/data/spark-apps.git", Path: "apps/wordcount", TargetRevision: "main",
				KubeVersion: "1.37.2", APIVersions: []string{"v1"}}.Env()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			if ok, err := plugin.Discover(ctx, app, env); !ok || err != nil {
				t.Fatalf("the plugin does not claim apps/wordcount: %v", err)
			}
			manifests, stderr, err := plugin.Generate(ctx, app, env)
			if err != nil {
				t.Fatalf("generate: %v\n%s", err, stderr)
			}
			stream := strings.Join(manifests, "---\n")
			if want := strings.ReplaceAll(string(golden), "spark-jobs", ns); stream != want {
				t.Fatalf("generated manifests differ from cmp/testdata/expected.yaml in namespace %s:\n%s", ns, stream)
			}
			flags := argocdFlags(ssa)
			r := argocd(t, c, "sync", "wordcount", ns, []byte(stream), flags...)
			if r.Phase != "Succeeded" || len(r.Results) != 5 {
				t.Fatalf("sync: %+v", r)
			}
			for _, res := range r.Results {
				if res.Status != "Synced" {
					t.Errorf("%s/%s: %s %s", res.Kind, res.Name, res.Status, res.Message)
				}
			}
			for _, f := range [][]string{flags, append(flags, "--server-side-diff")} {
				if d := argocd(t, c, "compare", "wordcount", ns, []byte(stream), f...).outOfSync(); d != "" {
					t.Errorf("after the sync (%v) the Application is OutOfSync:\n%s", f, d)
				}
			}
			if got := service(t, c, ns, "wordcount-ui-svc"); len(got.selector) != 0 || got.targetPort != "4040" {
				t.Errorf("the UI Service as synced: %s, want no selector and targetPort defaulted to the port", got)
			}
		})
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
