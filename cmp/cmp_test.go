package main

// The plugin's contract with argocd-cmp-server, run as the cmp-server runs it
// (testkit/argocdcmp): plugin.yaml as the sidecar reads it, the repository received into a
// fresh work directory, discover and generate in the Application's directory with the request's
// environment, the command found on the sidecar's PATH (the image's /usr/local/bin), the
// default 90 s ARGOCD_EXEC_TIMEOUT as the deadline.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/testkit/argocdcmp"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sparkui-cmp-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for bin, pkg := range map[string]string{"sparkui-fn": "../fn", "sparkui-cmp": "."} {
		build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, bin), pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	// The sidecar's PATH: the cmp-server resolves `sparkui-cmp` through it, and sparkui-cmp
	// resolves `sparkui-fn`.
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// received is the repository as the cmp-server unpacks it: a fresh directory per request.
func received(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	src := filepath.Join("testdata", "repo")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(work, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(work, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return work
}

func plugin(t *testing.T) *argocdcmp.Plugin {
	t.Helper()
	p, err := argocdcmp.Read("plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "sparkui" {
		t.Fatalf("plugin name %q, want sparkui (what Applications write in spec.source.plugin.name)", p.Name())
	}
	return p
}

// testApp is the Application of the tests, as the repo server describes it.
func testApp(path string, env ...[2]string) argocdcmp.App {
	return argocdcmp.App{Name: "wordcount", Namespace: "spark-jobs", Project: "default",
		Revision: "3f2a9c1e5b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a", RepoURL: "https://git.example.com/data/spark-apps.git",
		Path: path, TargetRevision: "main", KubeVersion: "1.37.2", APIVersions: []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1"},
		PluginEnv: env}
}

const execTimeout = 90 * time.Second // ARGOCD_EXEC_TIMEOUT's default

func generate(t *testing.T, app argocdcmp.App) ([]string, string, error) {
	t.Helper()
	work := received(t)
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	return plugin(t).Generate(ctx, filepath.Join(work, app.Path), app.Env())
}

// TestPluginGenerate: the manifests the plugin returns for apps/wordcount are exactly the
// golden (UPDATE_GOLDEN=1 rewrites it): the kustomization built, then the function's output.
func TestPluginGenerate(t *testing.T) {
	manifests, stderr, err := generate(t, testApp("apps/wordcount"))
	if err != nil {
		t.Fatalf("generate: %v\nstderr: %s", err, stderr)
	}
	got := strings.Join(manifests, "---\n")
	golden := filepath.Join("testdata", "expected.yaml")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("generated manifests differ from %s (UPDATE_GOLDEN=1 go test ./cmp -run TestPluginGenerate rewrites it):\n%s", golden, got)
	}
	var kinds []string
	for _, m := range manifests {
		kinds = append(kinds, strings.SplitN(strings.SplitN(m, "kind: ", 2)[1], "\n", 2)[0])
	}
	if fmt.Sprint(kinds) != "[Pod ServiceAccount Service Role RoleBinding]" {
		t.Errorf("objects %v", kinds)
	}
	for _, want := range []string{"namespace: spark-jobs", "name: sparkui-runtime", "name: wordcount-ui-svc"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in the generated manifests", want)
		}
	}
}

// TestPluginEnvConfig: the Application's plugin env SPARKUI_CONFIG (ARGOCD_ENV_SPARKUI_CONFIG
// in the command's environment) names another functionConfig in the directory.
func TestPluginEnvConfig(t *testing.T) {
	work := received(t)
	dir := filepath.Join(work, "apps", "wordcount")
	cfg := "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: sparkui\nspec:\n  service:\n    type: NodePort\n  sparkConf:\n    spark.ui.port: \"0\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sparkui-nodeport.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	app := testApp("apps/wordcount", [2]string{"SPARKUI_CONFIG", "sparkui-nodeport.yaml"})
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	manifests, stderr, err := plugin(t).Generate(ctx, dir, app.Env())
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, stderr)
	}
	if got := strings.Join(manifests, "---\n"); !strings.Contains(got, "type: NodePort") {
		t.Errorf("SPARKUI_CONFIG=sparkui-nodeport.yaml did not give a NodePort UI Service:\n%s", got)
	}
}

// TestPluginEnvConfigOutsideApp: an Application cannot name a file outside its own directory
// as the functionConfig (another application's checkout in the sidecar, or any file there).
func TestPluginEnvConfigOutsideApp(t *testing.T) {
	work := received(t)
	dir := filepath.Join(work, "apps", "wordcount")
	for _, cfg := range []string{"../plain/configmap.yaml", "/etc/passwd"} {
		ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
		_, stderr, err := plugin(t).Generate(ctx, dir, testApp("apps/wordcount", [2]string{"SPARKUI_CONFIG", cfg}).Env())
		cancel()
		want := "must be a relative path inside the Application's directory"
		if err == nil || !strings.Contains(err.Error()+stderr, want) {
			t.Errorf("SPARKUI_CONFIG=%s: %v, stderr %q; want refused (%s)", cfg, err, stderr, want)
		}
	}
}

// TestPluginDiscover: the plugin claims a directory with sparkui.yaml and no other.
func TestPluginDiscover(t *testing.T) {
	work := received(t)
	for path, want := range map[string]bool{"apps/wordcount": true, "apps/transformer": true, "apps/plain": false} {
		got, err := plugin(t).Discover(context.Background(), filepath.Join(work, path), testApp(path).Env())
		if err != nil || got != want {
			t.Errorf("discover %s: %t, %v; want %t", path, got, err, want)
		}
	}
}

// TestPluginGenerateErrors: what Argo CD shows when generation fails is the cmp-server's
// error, `<command>` failed <exit status>: <stderr>; the repository's exec-transformer layout
// (examples/kustomize) is refused with the fix.
func TestPluginGenerateErrors(t *testing.T) {
	_, _, err := generate(t, testApp("apps/transformer"))
	var ce *argocdcmp.CmdError
	if !errors.As(err, &ce) {
		t.Fatalf("generate in apps/transformer: %v, want a command error", err)
	}
	want := "`sparkui-cmp generate` failed exit status 1: sparkui-cmp: kustomization.yaml lists sparkui.yaml under transformers: with the Argo CD plugin, sparkui-cmp runs sparkui-fn itself; remove it from transformers (docs/deploy-argocd.md)"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}

	// A functionConfig the function refuses: its error result is on stderr and nothing is applied.
	work := received(t)
	dir := filepath.Join(work, "apps", "wordcount")
	if err := os.WriteFile(filepath.Join(dir, "sparkui.yaml"), []byte("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: sparkui\nspec:\n  service:\n    type: Bogus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	manifests, _, err := plugin(t).Generate(ctx, dir, testApp("apps/wordcount").Env())
	if !errors.As(err, &ce) || manifests != nil || !strings.Contains(ce.Stderr, "[SUI014] invalid functionConfig: spec.service.type") {
		t.Errorf("a bad functionConfig: %v (manifests %d), want a command error whose stderr carries the SUI014 result", err, len(manifests))
	}
}
