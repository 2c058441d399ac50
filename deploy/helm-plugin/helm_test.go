// Package helmplugin holds the tests of the sparkui Helm 4 post-renderer plugin
// (plugin.yaml, package.sh, stage/) with the real Helm CLI (testkit/helmtest) and, for the
// installs, the real control plane (testkit/testcluster) with the kubeflow operator's CRDs.
package helmplugin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/testkit/helmtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

func TestMain(m *testing.M) {
	code := testcluster.Run(m)
	if pkgDir != "" {
		os.RemoveAll(pkgDir)
	}
	os.Exit(code)
}

const (
	chart   = "example/spark-jobs"
	config  = "example/sparkui.yaml"
	release = "spark-jobs"
)

var (
	pkgOnce sync.Once
	pkgDir  string
	pkgLog  string
	pkgErr  error
)

func version(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// packagedAll runs package.sh with the real helm once per test binary, for this machine's
// platform and crossPlatform, and returns the output directory and package.sh's output.
func packagedAll(t testing.TB) (dir, log string) {
	t.Helper()
	helm := helmtest.Require(t)
	pkgOnce.Do(func() {
		if pkgDir, pkgErr = os.MkdirTemp("", "sparkui-helm-plugin-"); pkgErr != nil {
			return
		}
		c := crossPlatform()
		cmd := exec.Command("bash", "package.sh")
		cmd.Env = append(os.Environ(), "HELM="+helm, "OUT="+pkgDir, "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH+" "+c.os+"/"+c.arch)
		out, err := cmd.CombinedOutput()
		pkgLog = string(out)
		if err != nil {
			pkgErr = fmt.Errorf("package.sh: %v\n%s", err, out)
		}
	})
	if pkgErr != nil {
		t.Fatal(pkgErr)
	}
	return pkgDir, pkgLog
}

// packaged is the tarball package.sh made for this machine's platform.
func packaged(t testing.TB) string {
	t.Helper()
	dir, _ := packagedAll(t)
	return filepath.Join(dir, runtime.GOOS+"-"+runtime.GOARCH, "sparkui-"+version(t)+".tgz")
}

// installed is a fresh Helm home with the packaged plugin installed from its tarball.
func installed(t testing.TB) *helmtest.Home {
	t.Helper()
	tgz := packaged(t)
	h := helmtest.NewHome(t)
	out := h.MustRun(t, "", nil, "plugin", "install", tgz, "--verify=false")
	if !strings.Contains(out, "Installed plugin: sparkui") {
		t.Fatalf("helm plugin install: %s", out)
	}
	return h
}

// objects reads a YAML stream into its objects by apiVersion/kind/namespace/name, each as a
// map (comments and key order are not compared).
func objects(t testing.TB, stream string) map[string]map[string]any {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("%v\n%s", err, stream)
	}
	out := map[string]map[string]any{}
	for _, it := range items {
		m, err := it.Map()
		if err != nil {
			t.Fatal(err)
		}
		key := strings.Join([]string{it.GetApiVersion(), it.GetKind(), it.GetNamespace(), it.GetName()}, "/")
		if _, dup := out[key]; dup {
			t.Fatalf("%s twice in the output", key)
		}
		out[key] = m
	}
	return out
}

// dig is the value at path in a map read from YAML (kyaml's Map gives int, which
// unstructured's helpers cannot copy), nil when absent.
func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestHelmTemplate: `helm template --post-renderer sparkui --post-renderer-args sparkui.yaml`
// with the plugin installed from its package writes example/expected.yaml (UPDATE_GOLDEN=1
// rewrites it), which holds exactly the objects the function writes from the chart's plain
// render (`helm template | sparkui-fn sparkui.yaml -`): Helm's filename annotation is gone,
// the UI Services, Roles and sidecars are there, and the chart's own objects that sparkui has no
// rule for are unchanged. Run again on its own output (a chart whose template is that output),
// the plugin changes no object.
func TestHelmTemplate(t *testing.T) {
	h := installed(t)
	args := []string{"template", release, chart, "--namespace", "spark-jobs"}
	plain := h.MustRun(t, "", nil, args...)
	got := h.MustRun(t, "", nil, append(args, "--post-renderer", "sparkui", "--post-renderer-args", config)...)

	const golden = "example/expected.yaml"
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("helm template with the plugin differs from %s (UPDATE_GOLDEN=1 to rewrite; -want +got):\n%s", golden, d)
	}

	fn := exec.Command(filepath.Join(h.Dir, "data", "plugins", "sparkui", "bin", "sparkui-fn"), config, "-")
	fn.Stdin = strings.NewReader(plain)
	fnOut, err := fn.Output()
	if err != nil {
		t.Fatalf("the installed sparkui-fn on helm template's output: %v", err)
	}
	gotObjs, fnObjs, plainObjs := objects(t, got), objects(t, string(fnOut)), objects(t, plain)
	if d := cmp.Diff(fnObjs, gotObjs); d != "" {
		t.Errorf("the post-rendered objects differ from the function's on the plain render (-function +helm):\n%s", d)
	}
	if strings.Contains(got, "postrenderer.helm.sh/postrender-filename") {
		t.Error("Helm's filename annotation is left in the output")
	}
	for _, k := range []string{"v1/ServiceAccount/spark-jobs/spark-jobs-spark", "rbac.authorization.k8s.io/v1/Role/spark-jobs/spark-jobs-spark",
		"rbac.authorization.k8s.io/v1/RoleBinding/spark-jobs/spark-jobs-spark"} {
		if d := cmp.Diff(plainObjs[k], gotObjs[k]); d != "" || gotObjs[k] == nil {
			t.Errorf("%s changed or missing (-chart +post-rendered):\n%s", k, d)
		}
	}
	for _, app := range []string{"spark-jobs-pi", "spark-jobs-nightly-pi"} {
		svc := gotObjs["v1/Service/spark-jobs/"+app+"-sparkui-ui-svc"]
		if svc == nil {
			t.Errorf("no UI Service for %s; objects: %v", app, keys(gotObjs))
			continue
		}
		if typ := dig(svc, "spec", "type"); typ != "NodePort" {
			t.Errorf("%s's UI Service type %q, want NodePort (the functionConfig's)", app, typ)
		}
		if gotObjs["rbac.authorization.k8s.io/v1/Role/spark-jobs/"+app+"-sparkui-ui-svc-binder"] == nil {
			t.Errorf("no Role for %s's UI Service", app)
		}
	}
	for key, path := range map[string][]string{
		"sparkoperator.k8s.io/v1beta2/SparkApplication/spark-jobs/spark-jobs-pi":                  {"spec", "driver", "template", "spec", "initContainers"},
		"sparkoperator.k8s.io/v1beta2/ScheduledSparkApplication/spark-jobs/spark-jobs-nightly-pi": {"spec", "template", "driver", "template", "spec", "initContainers"},
	} {
		inits, _ := dig(gotObjs[key], path...).([]any)
		if len(inits) != 1 || inits[0].(map[string]any)["name"] != "sparkui-runtime" || inits[0].(map[string]any)["restartPolicy"] != "Always" {
			t.Errorf("%s: %s = %v, want the sparkui-runtime native sidecar", key, strings.Join(path, "."), inits)
		}
	}

	// The output as a chart's only template: a second pass changes no object.
	again := filepath.Join(t.TempDir(), "again")
	if err := os.MkdirAll(filepath.Join(again, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "{{") {
		t.Fatal("the output holds {{, which Helm would read as a template")
	}
	if err := os.WriteFile(filepath.Join(again, "Chart.yaml"), []byte("apiVersion: v2\nname: again\nversion: 0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(again, "templates", "all.yaml"), []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
	second := h.MustRun(t, "", nil, "template", release, again, "--namespace", "spark-jobs", "--post-renderer", "sparkui", "--post-renderer-args", config)
	if d := cmp.Diff(gotObjs, objects(t, second)); d != "" {
		t.Errorf("not idempotent through Helm (-first +second):\n%s", d)
	}
}

// TestHelmBadConfig: a functionConfig the function refuses makes the helm command fail, and
// Helm's stderr (a pipe here, as in CI) carries the SUI014 line naming the field, although
// Helm itself drops the plugin's stderr (fn/helmstderr_linux.go).
func TestHelmBadConfig(t *testing.T) {
	h := installed(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: sparkui\nspec:\n  service:\n    type: Internal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.Run("", nil, "template", release, chart, "--namespace", "spark-jobs", "--post-renderer", "sparkui", "--post-renderer-args", bad)
	if r.Err == nil {
		t.Fatalf("helm template succeeded with a bad functionConfig:\n%s", r.Stdout)
	}
	for _, want := range []string{
		`[SUI014] invalid functionConfig: spec.service.type: value must be one of "ClusterIP", "NodePort", "LoadBalancer"`,
		`Error: error while running post render on files: failed to invoke post-renderer plugin "sparkui": plugin "sparkui" exited with error`,
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("helm's stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if r.Stdout != "" {
		t.Errorf("helm wrote manifests although the post-renderer failed:\n%s", r.Stdout)
	}
}

var (
	sparkApps    = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	scheduledApp = schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "scheduledsparkapplications"}
)

// TestHelmInstall: against the real control plane with the kubeflow operator's CRDs,
// `helm install --dry-run=server` with the plugin succeeds and shows the UI Service, its Role
// and the sidecar; the real install is accepted by the API server (Helm 4 applies server-side
// with strict field validation), and a `helm upgrade` with the same chart and config changes
// none of the objects (their resourceVersions stay); one without the post-renderer removes
// what sparkui added.
func TestHelmInstall(t *testing.T) {
	h := installed(t)
	c := testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds"}})
	ns := c.UniqueNamespace(t)
	env := []string{"KUBECONFIG=" + c.KubeconfigFile(t, c.Config)}
	pr := []string{"--namespace", ns, "--post-renderer", "sparkui", "--post-renderer-args", config}

	dry := h.MustRun(t, "", env, append([]string{"install", release, chart, "--dry-run=server"}, pr...)...)
	for _, want := range []string{"STATUS: pending-install", "DESCRIPTION: Dry run complete",
		"name: spark-jobs-pi-sparkui-ui-svc\n", "name: spark-jobs-nightly-pi-sparkui-ui-svc\n",
		"name: spark-jobs-pi-sparkui-ui-svc-binder\n", "name: sparkui-runtime\n", "type: NodePort\n"} {
		if !strings.Contains(dry, want) {
			t.Errorf("helm install --dry-run=server lacks %q:\n%s", want, dry)
		}
	}
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Services(ns).Get(ctx, "spark-jobs-pi-sparkui-ui-svc", metav1.GetOptions{}); err == nil {
		t.Fatal("the dry run created the UI Service")
	}

	h.MustRun(t, "", env, append([]string{"install", release, chart, "--wait=false"}, pr...)...)
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, "spark-jobs-pi-sparkui-ui-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the UI Service is not in the cluster: %v", err)
	}
	if svc.Spec.Type != "NodePort" || len(svc.Spec.Selector) != 0 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 4045 {
		t.Errorf("UI Service spec = %+v, want NodePort, no selector, one port 4045", svc.Spec)
	}
	if svc.Annotations["meta.helm.sh/release-name"] != release {
		t.Errorf("the UI Service is not part of the release: annotations %v", svc.Annotations)
	}
	role, err := c.Client.RbacV1().Roles(ns).Get(ctx, "spark-jobs-pi-sparkui-ui-svc-binder", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the UI Service's Role is not in the cluster: %v", err)
	}
	if len(role.Rules) == 0 || strings.Join(role.Rules[0].ResourceNames, ",") != "spark-jobs-pi-sparkui-ui-svc" {
		t.Errorf("Role rules = %+v, want one restricted to the UI Service", role.Rules)
	}
	app, err := c.Dynamic.Resource(sparkApps).Namespace(ns).Get(ctx, "spark-jobs-pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inits, _, _ := unstructured.NestedSlice(app.Object, "spec", "driver", "template", "spec", "initContainers")
	if len(inits) != 1 || inits[0].(map[string]any)["name"] != "sparkui-runtime" {
		t.Errorf("the stored SparkApplication's driver template initContainers = %v, want the sparkui-runtime sidecar", inits)
	}
	sched, err := c.Dynamic.Resource(scheduledApp).Namespace(ns).Get(ctx, "spark-jobs-nightly-pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	before := map[string]string{"svc": svc.ResourceVersion, "role": role.ResourceVersion, "app": app.GetResourceVersion(), "sched": sched.GetResourceVersion()}
	up := h.MustRun(t, "", env, append([]string{"upgrade", release, chart, "--wait=false"}, pr...)...)
	if !strings.Contains(up, "REVISION: 2") {
		t.Errorf("helm upgrade:\n%s", up)
	}
	svc2, err := c.Client.CoreV1().Services(ns).Get(ctx, "spark-jobs-pi-sparkui-ui-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role2, err := c.Client.RbacV1().Roles(ns).Get(ctx, "spark-jobs-pi-sparkui-ui-svc-binder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app2, err := c.Dynamic.Resource(sparkApps).Namespace(ns).Get(ctx, "spark-jobs-pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sched2, err := c.Dynamic.Resource(scheduledApp).Namespace(ns).Get(ctx, "spark-jobs-nightly-pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := map[string]string{"svc": svc2.ResourceVersion, "role": role2.ResourceVersion, "app": app2.GetResourceVersion(), "sched": sched2.GetResourceVersion()}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("helm upgrade with the same chart changed objects (resourceVersions, -install +upgrade):\n%s", d)
	}

	// Helm keeps no post-renderer in the release: an upgrade without one removes what sparkui
	// added, as docs/deploy-helm.md warns.
	h.MustRun(t, "", env, "upgrade", release, chart, "--namespace", ns, "--wait=false")
	if _, err := c.Client.CoreV1().Services(ns).Get(ctx, "spark-jobs-pi-sparkui-ui-svc", metav1.GetOptions{}); err == nil {
		t.Error("the UI Service survived an upgrade without the post-renderer")
	}
	app3, err := c.Dynamic.Resource(sparkApps).Namespace(ns).Get(ctx, "spark-jobs-pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(app3.Object, "spec", "driver", "template"); found {
		t.Error("the driver template (sparkui's sidecar) survived an upgrade without the post-renderer")
	}
}
