package examples_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// workflow is the part of a GitHub Actions workflow the test runs.
type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Name string `json:"name"`
			ID   string `json:"id"`
			Uses string `json:"uses"`
			If   string `json:"if"`
			Run  string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

// TestPreMergeWorkflow runs examples/pre-merge-ci/github-actions.yaml's run: steps, in order,
// in a workspace holding examples/kustomize as overlays/prod: the tools it installs are the
// ones it runs (kustomize through the Go module proxy at the version the repository pins;
// sparkui-fn built from this checkout, the one substitution, since the module is not
// published), the overlay renders, the gate passes with a SARIF report and no error, and the
// fail step is not reached. Its pinned versions are the repository's.
func TestPreMergeWorkflow(t *testing.T) {
	const path = "examples/pre-merge-ci/github-actions.yaml"
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	job, ok := wf.Jobs["sparkui"]
	if !ok {
		t.Fatalf("%s has no job sparkui", path)
	}
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	fnInstall := "go install github.com/sparkui/sparkui/fn@v" + strings.TrimSpace(string(version))
	kustomizeInstall := "go install sigs.k8s.io/kustomize/kustomize/v5@" + kustomizeVersion
	for _, want := range []string{fnInstall, kustomizeInstall} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not install with %q (the repository's versions)", path, want)
		}
	}
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "overlays", "prod"), os.DirFS(filepath.Join(root, "examples", "kustomize"))); err != nil {
		t.Fatal(err)
	}
	output := filepath.Join(ws, "github-output")
	os.WriteFile(output, nil, 0o600)
	ran := 0
	for _, s := range job.Steps {
		if s.Run == "" {
			continue // uses: steps are GitHub's (checkout, setup-go, the SARIF upload)
		}
		if s.If != "" {
			// The only conditional step is the failure: reached only with a status.
			if st, _ := os.ReadFile(output); len(st) > 0 {
				t.Errorf("step %q reached: the gate failed (%s)", s.Name, st)
			}
			continue
		}
		script := strings.ReplaceAll(s.Run, fnInstall, "go build -C "+root+" -o \"$PWD/bin/fn\" ./fn")
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = ws
		// CGO off as make kustomize builds it, so the build cache serves this install too.
		cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+output, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("step %q: %v\n%s", s.Name, err, out)
		}
		ran++
	}
	if ran != 3 {
		t.Errorf("ran %d steps, want install, render and rules", ran)
	}
	sarif, err := os.ReadFile(filepath.Join(ws, "sparkui.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runs []struct {
			Results []struct {
				Level string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif, &rep); err != nil || len(rep.Runs) != 1 {
		t.Fatalf("sparkui.sarif is no SARIF report with one run (%v):\n%s", err, sarif)
	}
	for _, r := range rep.Runs[0].Results {
		if r.Level == "error" {
			t.Errorf("the rendered overlay has an error finding:\n%s", sarif)
		}
	}
	rendered, _ := os.ReadFile(filepath.Join(ws, "build", "prod.yaml"))
	if !strings.Contains(string(rendered), "name: sparkui-runtime") {
		t.Errorf("build/prod.yaml was not rendered by sparkui-fn:\n%s", rendered)
	}
}
