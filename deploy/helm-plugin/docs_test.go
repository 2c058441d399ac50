package helmplugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkui/sparkui/testkit/helmtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestDeployHelmDoc runs docs/deploy-helm.md's blocks marked <!-- helm-doc-test -->, in order,
// as one script under bash -euo pipefail from the repository root, as a reader would: `make
// helm-plugin`, the plugin installed from its package, helm template, helm install
// --dry-run=server, install and upgrade against the real control plane with the kubeflow
// CRDs. Helm's homes are the test's own, and the rendered file the page writes must be
// example/expected.yaml, as the page says.
func TestDeployHelmDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deploy-helm.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- helm-doc-test -->\n```sh\n(.*?)```\n").FindAllSubmatch(doc, -1)
	if len(blocks) != 3 {
		t.Fatalf("docs/deploy-helm.md has %d blocks marked <!-- helm-doc-test -->, want 3 (install, render, install in a cluster)", len(blocks))
	}
	var script strings.Builder
	for _, b := range blocks {
		script.Write(b[1])
	}

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	rendered := filepath.Join(root, "spark-jobs.yaml")
	if _, err := os.Stat(rendered); err == nil {
		t.Fatalf("%s exists: the page writes it, and the test would remove it", rendered)
	}
	t.Cleanup(func() { os.Remove(rendered) })

	h := helmtest.NewHome(t)
	c := testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds"}})
	c.EnsureNamespace(t, "spark-jobs")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Dir = root
	cmd.Env = append(h.Env, "KUBECONFIG="+c.KubeconfigFile(t, c.Config))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/deploy-helm.md's commands fail: %v\n%s\n%s", err, script.String(), out)
	}
	for _, want := range []string{
		"Successfully packaged plugin and saved it to: bin/helm-plugin/" + runtime.GOOS + "-" + runtime.GOARCH + "/sparkui-",
		"Installed plugin: sparkui",
		"DESCRIPTION: Dry run complete",
		"STATUS: deployed\nREVISION: 1",
		"STATUS: deployed\nREVISION: 2",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the page's commands did not print %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^sparkui\s+\S+\s+postrenderer/v1`).Match(out) {
		t.Errorf("helm plugin list shows no sparkui postrenderer/v1:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^1$`).Match(out) {
		t.Errorf("the grep for the UI Service did not count 1:\n%s", out)
	}
	got, err := os.ReadFile(rendered)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("example/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("the page's spark-jobs.yaml is not example/expected.yaml (-want +got):\n%s", d)
	}
}
