package examples_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sparkui/sparkui/internal/version"
)

// TestPreMergeBaseline: the pre-merge-ci example's baseline comparison. main.yaml is the
// kubeflow and workloads examples' output (kept equal to their expected.yaml, so it follows
// them), change.yaml the same with a newer runtime image; `sparkui-fn validate --baseline`
// prints expected-baseline.txt and exits 1 (the Job's refused template) in text, and gives
// the same findings in SARIF.
func TestPreMergeBaseline(t *testing.T) {
	const dir = "examples/pre-merge-ci"
	main := string(mustReadFile(t, filepath.Join(root, dir, "baseline", "main.yaml")))
	rendered := string(mustReadFile(t, filepath.Join(root, "examples", "kubeflow", "expected.yaml"))) + "---\n" +
		string(mustReadFile(t, filepath.Join(root, "examples", "workloads", "expected.yaml")))
	if body := main[strings.Index(main, "apiVersion"):]; body != rendered[strings.Index(rendered, "apiVersion"):] {
		t.Errorf("%s/baseline/main.yaml is not the kubeflow and workloads examples' expected.yaml: regenerate it as its README says", dir)
	}
	change := string(mustReadFile(t, filepath.Join(root, dir, "baseline", "change.yaml")))
	// The next contract's image, as an upgrade that changes the runtime contract writes it.
	c, err := version.ParseContract(version.RuntimeContract)
	if err != nil {
		t.Fatal(err)
	}
	next := version.RuntimeRepository + ":" + version.RuntimeTag(fmt.Sprintf("%d.%d", c.Major, c.Minor+1))
	if strings.Count(change, next) != 6 || strings.Contains(change, version.RuntimeImage()) {
		t.Errorf("change.yaml: want main.yaml with the 6 runtime images at %s", next)
	}
	args := []string{"validate", "--baseline", dir + "/baseline/main.yaml", dir + "/baseline/change.yaml"}
	code, out, errOut := runExit(t, nil, "bin/sparkui-fn", args...)
	if code != 1 || !strings.Contains(errOut, "1 error, 3 warnings, 2 info") {
		t.Fatalf("exit %d, want 1; stderr %s", code, errOut)
	}
	golden := filepath.Join(root, dir, "expected-baseline.txt")
	if *update {
		write(t, golden, out)
	} else if d := cmp.Diff(string(mustReadFile(t, golden)), out); d != "" {
		t.Errorf("expected-baseline.txt differs (-want +got):\n%s", d)
	}
	_, sarif, _ := runExit(t, nil, "bin/sparkui-fn", append(args, "--output", "sarif")...)
	for _, id := range []string{"SUI070", "SUI071", "SUI073"} {
		if !strings.Contains(sarif, `"ruleId": "`+id+`"`) {
			t.Errorf("SARIF has no %s result", id)
		}
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPreMergeBaselineScript runs baseline.sh as a team would, in a git repository of its
// own: main holds the kustomize example as overlays/prod, the working tree sets a newer
// runtime image; the script renders both with the real kustomize and prints the driver Pod's
// restart (SUI071) and nothing else.
func TestPreMergeBaselineScript(t *testing.T) {
	repo, tools := t.TempDir(), t.TempDir()
	if err := os.CopyFS(filepath.Join(repo, "overlays", "prod"), os.DirFS(filepath.Join(root, "examples", "kustomize"))); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"kustomize": kustomizeBin(t), "sparkui-fn": filepath.Join(root, "bin", "sparkui-fn")} {
		if err := os.Symlink(target, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(tools, filepath.Join(repo, "bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		run(t, repo, nil, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "main")
	cfg := filepath.Join(repo, "overlays", "prod", "sparkui.yaml")
	b := mustReadFile(t, cfg)
	if err := os.WriteFile(cfg, append(b, []byte("  runtime:\n    image: ghcr.io/sparkui/sparkui-runtime:0.2.0\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "examples", "pre-merge-ci", "baseline.sh")
	cmd := exec.Command(script, "overlays/prod", "main")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("baseline.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "warning: [SUI071] Pod ") ||
		!strings.Contains(lines[0], "(sparkui's fields spec.initContainers[0].image)") {
		t.Errorf("baseline.sh printed:\n%s", out)
	}
}
