package examples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docBlock is the fenced block that follows the line `<!-- make test runs this block: … name
// … -->` in the doc at path (relative to the root): the commands a "Deploy with…" page gives
// are the ones its test runs, never a copy that could drift.
func docBlock(t *testing.T, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "<!-- make test runs this block:") || !strings.Contains(l, " "+name+" ") {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Fatalf("%s:%d: the marker for %s is not followed by a fenced block", path, i+1, name)
		}
		for j := i + 2; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "```") {
				return strings.Join(lines[i+2:j], "\n") + "\n"
			}
		}
		t.Fatalf("%s:%d: the block for %s is not closed", path, i+2, name)
	}
	t.Fatalf("%s has no block marked for %s", path, name)
	return ""
}

// toolDir is a directory for PATH holding the tools a doc's commands call by name, each a
// symbolic link to the binary the tests use (name → path).
func toolDir(t *testing.T, tools map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, path := range tools {
		if err := os.Symlink(path, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runScript runs script with bash in dir, with PATH led by tools and env added, and fails
// the test (with both streams) unless it exits 0.
func runScript(t *testing.T, dir, tools, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in %s:\n%s\n%v\n%s", dir, script, err, out)
	}
	return string(out)
}

// deployWorkspace copies example (under examples/) to dir inside a new workspace, with the
// built sparkui-fn at bin/sparkui-fn there (where the examples' exec paths, ../../bin, point
// from a directory two levels down) and the other tools beside it; it returns the workspace
// and its bin directory.
func deployWorkspace(t *testing.T, example, dir string, tools map[string]string) (string, string) {
	t.Helper()
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, dir), os.DirFS(filepath.Join(root, "examples", example))); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ws, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tools["sparkui-fn"] = filepath.Join(root, "bin", "sparkui-fn")
	for name, path := range tools {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, bin
}

// sameAsExpected: the block's rendered.yaml is the example's expected.yaml, byte for byte.
func sameAsExpected(t *testing.T, ws, example string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(ws, "rendered.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "examples", example, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("rendered.yaml differs from examples/%s/expected.yaml:\n%s", example, got)
	}
}

// TestDeployKustomize runs docs/deploy-kustomize.md's block on examples/kustomize as
// overlays/prod with kustomize v5.8.1.
func TestDeployKustomize(t *testing.T) {
	ws, bin := deployWorkspace(t, "kustomize", filepath.Join("overlays", "prod"), map[string]string{"kustomize": kustomizeBin(t)})
	runScript(t, ws, bin, docBlock(t, "docs/deploy-kustomize.md", "TestDeployKustomize"))
	sameAsExpected(t, ws, "kustomize")
}

// TestDeployKpt runs docs/deploy-kpt.md's block on examples/kpt-imperative as spark-pkg with
// the real kpt; the package is left as it was.
func TestDeployKpt(t *testing.T) {
	ws, bin := deployWorkspace(t, "kpt-imperative", "spark-pkg", map[string]string{"kpt": kptBin(t)})
	before := snapshot(t, filepath.Join(ws, "spark-pkg"))
	runScript(t, ws, bin, docBlock(t, "docs/deploy-kpt.md", "TestDeployKpt"))
	sameAsExpected(t, ws, "kpt-imperative")
	sameTree(t, "spark-pkg after kpt fn eval --output unwrap", before, snapshot(t, filepath.Join(ws, "spark-pkg")))
}

// TestDeployCI runs docs/deploy-ci.md's plain-CLI block in a copy of examples/spark-submit.
func TestDeployCI(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(filepath.Join(root, "examples", "spark-submit"))); err != nil {
		t.Fatal(err)
	}
	bin := toolDir(t, map[string]string{"sparkui-fn": filepath.Join(root, "bin", "sparkui-fn")})
	runScript(t, ws, bin, docBlock(t, "docs/deploy-ci.md", "TestDeployCI"))
	sameAsExpected(t, ws, "spark-submit")
}
