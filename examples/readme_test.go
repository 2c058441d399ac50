package examples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeQuickstart runs the README's quickstart block as written, from the repository
// root, under bash -euo pipefail: every command must succeed (the validate gate included), and
// the rendered file must hold what the README says it holds.
func TestReadmeQuickstart(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- quickstart -->\n```sh\n(.*?)```\n<!-- /quickstart -->").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no quickstart block between <!-- quickstart --> and <!-- /quickstart -->")
	}
	script := string(m[1])
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's quickstart fails: %v\n%s\n%s", err, script, out)
	}
	for _, want := range []string{"name: spark-pi-sparkui-ui-svc", "name: spark-pi-sparkui-ui-svc-binder",
		"sparkui-fn validate: 0 errors, 2 warnings"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quickstart's output lacks %q:\n%s", want, out)
		}
	}
	// The README's table and text name the commands by the paths make puts them at.
	for _, want := range []string{"~/.cache/sparkui/bin/kustomize-" + kustomizeVersion, "make kustomize", "make build"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}
