package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// previousContract is the commit whose runtime is contract 1.0 (CHANGELOG.md): main before
// runtime contracts, published as ghcr.io/sparkui/sparkui-runtime:0.1.0.
const previousContract = "014b7aa"

// buildAt builds the runtime as it was at a commit, from `git archive` into a temporary
// directory (CI clones the whole history, so the commit is there).
func buildAt(t *testing.T, commit string) string {
	t.Helper()
	if out, err := exec.Command("git", "rev-parse", "--verify", commit+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("commit %s is not in this clone (a shallow clone? CI fetches the full history): %v\n%s", commit, err, out)
	}
	src := t.TempDir()
	arch := exec.Command("sh", "-c", "git -C .. archive "+commit+" | tar -x -C "+src)
	if out, err := arch.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(t.TempDir(), "sparkui-runtime-"+commit)
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./runtime")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the runtime at %s: %v\n%s", commit, err, out)
	}
	return bin
}

// renderedArgs are the runtime args of the first runtime container of a rendering: the
// function's output as written by the version that wrote it.
func renderedArgs(t *testing.T, rendering []byte) []string {
	t.Helper()
	nodes, err := yaml.Parse(string(rendering))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(nodes.MustString()), &m); err != nil {
		t.Fatal(err)
	}
	for _, item := range m["items"].([]any) {
		spec, _ := item.(map[string]any)["spec"].(map[string]any)
		inits, _ := spec["initContainers"].([]any)
		for _, c := range inits {
			if c := c.(map[string]any); c["name"] == "sparkui-runtime" {
				var args []string
				for _, a := range c["args"].([]any) {
					args = append(args, fmt.Sprint(a))
				}
				return args
			}
		}
	}
	t.Fatal("no runtime container in the rendering")
	return nil
}

// forTest points rendered args at this test's Service and application, under --host-network
// (the stand-in UIs of every test share this machine's network namespace), with the
// out-of-cluster paths.
func forTest(args []string, svc, appID, shared string) []string {
	var out []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--service="):
			a = "--service=" + svc
		case strings.HasPrefix(a, "--app-id="):
			a = "--app-id=" + appID
		case strings.HasPrefix(a, "--host-network="):
			a = "--host-network=true"
		case strings.HasPrefix(a, "--ui-port="):
			a = "--ui-port=0"
		}
		out = append(out, a)
	}
	return append(out, "--socket="+filepath.Join(shared, "runtime.sock"), "--install=",
		"--state-file="+filepath.Join(shared, "bound-port"), "--termination-log="+filepath.Join(shared, "termination-log"))
}

// TestSkew runs runtimes of two contracts against each other's function: the runtime of
// contract 1.0 with what this function writes, this runtime with what the 1.0 function wrote
// (the golden at that commit), and this runtime with settings of a newer contract it does not
// know. Each binds; the last says what it ignored in its log and termination message.
func TestSkew(t *testing.T) {
	old := buildAt(t, previousContract)
	oldRendering, err := exec.Command("git", "-C", "..", "show", previousContract+":testdata/fixed-port/expected.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	newRendering, err := os.ReadFile("../testdata/fixed-port/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := testcluster.Shared(t, clusterOpts)
	for _, tc := range []struct {
		name, binary string
		rendering    []byte
		extraArgs    []string
		extraEnv     []string
		notice       string // in the termination log
	}{
		{name: "old runtime, new function", binary: old, rendering: newRendering},
		{name: "new runtime, old function", binary: binary, rendering: oldRendering},
		{name: "new runtime, newer settings", binary: binary, rendering: newRendering,
			extraArgs: []string{"--from-a-newer-contract=x"}, extraEnv: []string{"SPARKUI_NEWER_SETTING=1"},
			notice: "ignoring settings this runtime (contract 1.2) does not know: flags --from-a-newer-contract; environment SPARKUI_NEWER_SETTING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := c.UniqueNamespace(t)
			appID, svc := "spark-"+ns, "skew-ui-svc"
			pod := setup(t, c, ns, appID, svc)
			kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
			ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
			if err != nil {
				t.Fatal(err)
			}
			defer ui.Close()
			shared, err := os.MkdirTemp("", "sui")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(shared)
			args := append(forTest(renderedArgs(t, tc.rendering), svc, appID, shared), tc.extraArgs...)
			env := append([]string{"KUBECONFIG=" + kubeconfig, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}, tc.extraEnv...)
			p := startProcOf(t, tc.binary, env, args...)
			testcluster.WaitFor(t, 15*time.Second, "the bind", func() (bool, string) {
				sel, port := selector(t, c, ns, svc)
				return sel[names.LabelAppSelector] == appID && port == ui.Port, fmt.Sprint(sel, port, "\n", p.out.String())
			})
			b, _ := os.ReadFile(filepath.Join(shared, "termination-log"))
			if tc.notice == "" && len(b) != 0 || !strings.Contains(string(b), tc.notice) {
				t.Errorf("termination log %q, want %q", b, tc.notice)
			}
			if tc.notice != "" && !strings.Contains(p.out.String(), "ignoring settings") {
				t.Errorf("no log line about the ignored settings:\n%s", p.out.String())
			}
			if code := p.sigterm(t, 10*time.Second); code != 0 {
				t.Errorf("exit code %d after SIGTERM\n%s", code, p.out.String())
			}
		})
	}
}
