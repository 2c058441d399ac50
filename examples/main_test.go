// Package examples_test runs every example under examples/ with the real tool it documents
// (bin/sparkui-fn standalone, the kustomize CLI, kpt) and compares the output with the
// example's expected.yaml, byte for byte. Each example is then run a second time, through
// the same tool, on its own output: the result must not change (idempotency).
//
//	go test ./examples/                     # check
//	go test ./examples/ -update             # rewrite every expected.yaml (or UPDATE_EXPECTED=1)
//
// TestMain builds bin/sparkui-fn itself, so the test needs nothing but the kustomize CLI
// (`make kustomize`) and kpt on $PATH. Missing tools fail the test, never skip it.
package examples_test

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

var update = flag.Bool("update", false, "rewrite each example's expected.yaml with the actual output")

const kustomizeVersion = "v5.8.1"

// root is the repository root, absolute. Every command runs there, exactly as the READMEs
// spell it.
var root string

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if root, err = filepath.Abs(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := buildFn(); err != nil {
		fmt.Fprintln(os.Stderr, "examples: building bin/sparkui-fn:", err)
		os.Exit(2)
	}
	os.Exit(testcluster.Run(m))
}

// buildFn builds bin/sparkui-fn the way `make build` does (static, same version stamp) and
// swaps it in with a rename, so a sparkui-fn that another test is running is never
// overwritten in place.
func buildFn() error {
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(root, "bin", fmt.Sprintf(".sparkui-fn-%d", os.Getpid()))
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X github.com/sparkui/sparkui/internal/version.Version="+strings.TrimSpace(string(version)),
		"-o", tmp, "./fn")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%v\n%s", err, out)
	}
	return os.Rename(tmp, filepath.Join(root, "bin", "sparkui-fn"))
}

// readInputs reads what the outputs depend on besides the examples themselves: the sources
// bin/sparkui-fn is built from. go test caches a passing result until a file or environment
// variable the test consulted changes, and it only records them once m.Run has started, so
// this runs inside the test, not in TestMain.
func readInputs() error {
	for _, f := range []string{"go.mod", "go.sum", "VERSION"} {
		if _, err := os.ReadFile(filepath.Join(root, f)); err != nil {
			return err
		}
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "examples", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) || strings.HasSuffix(name, ".json") {
			_, err = os.ReadFile(path)
		}
		return err
	})
}
