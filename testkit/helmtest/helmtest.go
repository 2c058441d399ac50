// Package helmtest runs the real Helm 4 CLI for tests: built from its Go module
// (helm.sh/helm/v4, cmd/helm) by build-helm.sh (`make helm`) into the tool cache. A missing
// binary fails the test with the command that builds it: it is never skipped.
//
// Every Helm run here is isolated from the user's Helm: its config, cache and data homes (and
// so its plugins directory and repositories) are directories of the test (helm.sh/helm/v4
// pkg/helmpath/lazypath.go: HELM_CONFIG_HOME, HELM_CACHE_HOME, HELM_DATA_HOME;
// pkg/cli/environment.go: HELM_PLUGINS defaults under the data home).
package helmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Version is the Helm release build-helm.sh builds.
const Version = "v4.3.1"

// Binary is where build-helm.sh caches helm:
// ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/helm/<Version>/helm.
func Binary() string {
	return filepath.Join(testcluster.CacheDir(), "helm", Version, "helm")
}

// Require fails t unless the helm binary is built, and returns its path.
func Require(t testing.TB) string {
	t.Helper()
	b := Binary()
	if st, err := os.Stat(b); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("helmtest: the Helm CLI %s is not built at %s: run `make helm` (testkit/helmtest/build-helm.sh)", Version, b)
	}
	return b
}

// Home is one isolated Helm installation: its homes, the plugins installed into it.
type Home struct {
	Helm string
	Dir  string
	// Env is the environment a helm (or a script running helm) gets: the process's, with
	// HELM_* homes set to Dir and helm's directory first on PATH.
	Env []string
}

// NewHome makes an empty Helm home in a temporary directory of t.
func NewHome(t testing.TB) *Home {
	t.Helper()
	h := &Home{Helm: Require(t), Dir: t.TempDir()}
	var env []string
	for _, kv := range os.Environ() {
		// The caller's Helm settings would reach into the user's installation.
		if strings.HasPrefix(kv, "HELM_") || strings.HasPrefix(kv, "KUBECONFIG=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"HELM_CONFIG_HOME="+filepath.Join(h.Dir, "config"),
		"HELM_CACHE_HOME="+filepath.Join(h.Dir, "cache"),
		"HELM_DATA_HOME="+filepath.Join(h.Dir, "data"),
		"PATH="+filepath.Dir(h.Helm)+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	h.Env = env
	return h
}

// Result is one helm run.
type Result struct {
	Stdout, Stderr string
	Err            error
}

// Run runs helm with args in dir (the test's working directory when empty), with extra
// environment entries appended.
func (h *Home) Run(dir string, extraEnv []string, args ...string) Result {
	cmd := exec.Command(h.Helm, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, h.Env...), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// MustRun is Run that fails t on a non-zero exit, and returns stdout.
func (h *Home) MustRun(t testing.TB, dir string, extraEnv []string, args ...string) string {
	t.Helper()
	r := h.Run(dir, extraEnv, args...)
	if r.Err != nil {
		t.Fatalf("helm %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}
