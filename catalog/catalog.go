// Package catalog runs the examples of sparkui-fn's kpt catalog entry (catalog/sparkui-fn,
// catalog/examples) the way the kpt function catalog's e2e harness runs its own: a package
// whose `.expected/` directory says how to run the function (`.expected/config.yaml`) and
// what must come out (`.expected/diff.patch`, the `git diff` of the package after the run; or,
// when the run fails, `.expected/results.yaml`, kpt's results file).
//
// The harness is kpt's pkg/test/runner (kptdev/kpt, read: config.go's TestCaseConfig and
// EvalTestCaseConfig, runner.go's runFnEval and compareResult), which
// kptdev/krm-functions-catalog's tests/e2etest drives. This is our own small version of its
// eval case, with one difference: the function comes from the caller, as `--exec PATH`
// (exec mode) or `--image REF` (container mode), so the same example is run both ways and
// must give the same diff and the same results. In the results the function is then named as
// config.yaml's image in both modes (kpt writes `exec: PATH` for an exec function).
package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Config is `.expected/config.yaml`: the fields of kpt's TestCaseConfig this catalog uses.
// Unknown fields are refused, so an example cannot ask for something the runner ignores.
type Config struct {
	// TestType: only eval here (kpt's default, render, needs a Kptfile pipeline).
	TestType string `json:"testType"`
	// ExitCode is kpt's expected exit code; non-zero compares results.yaml, zero diff.patch.
	ExitCode int `json:"exitCode,omitempty"`
	// Image is the function's image as users run it: ghcr.io/sparkui/sparkui-fn:<version>.
	Image string `json:"image"`
	// Args are the ConfigMap functionConfig, passed as key=value after `--`.
	Args map[string]string `json:"args,omitempty"`
}

// ReadConfig reads dir/.expected/config.yaml.
func ReadConfig(dir string) (Config, error) {
	var c Config
	b, err := os.ReadFile(filepath.Join(dir, ".expected", "config.yaml"))
	if err != nil {
		return c, err
	}
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return c, fmt.Errorf("%s/.expected/config.yaml: %w", dir, err)
	}
	if c.TestType != "eval" {
		return c, fmt.Errorf("%s/.expected/config.yaml: testType %q, want eval", dir, c.TestType)
	}
	if c.Image == "" {
		return c, fmt.Errorf("%s/.expected/config.yaml: no image", dir)
	}
	return c, nil
}

// Outcome is what one run of an example gave.
type Outcome struct {
	ExitCode int
	Diff     string // git diff of the package, trimmed, when ExitCode is 0
	Results  string // kpt's results file, trimmed, when ExitCode is not 0
	Output   string // kpt's stdout and stderr, for failure messages
}

// Run runs example dir with kpt as kpt's harness does: a copy of the package committed to a
// fresh git repository, `kpt fn eval PKG --results-dir DIR <fn> -- k=v…` twice (the second
// run proves the function idempotent: the diff must not change), then the diff against the
// first commit. fn is the function: {"--exec", path} or {"--image", ref}. env (nil: this
// process's) is kpt's environment: for container mode, podman's configuration.
func Run(dir, kpt string, fn, env []string) (Outcome, error) {
	var o Outcome
	cfg, err := ReadConfig(dir)
	if err != nil {
		return o, err
	}
	tmp, err := os.MkdirTemp("", "sparkui-catalog-")
	if err != nil {
		return o, err
	}
	defer os.RemoveAll(tmp)
	pkg := filepath.Join(tmp, filepath.Base(dir))
	if err := os.CopyFS(pkg, os.DirFS(dir)); err != nil {
		return o, err
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=sparkui", "-c", "user.email=dev@sparkui.dev", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = pkg
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	if _, err := git("init", "-q"); err != nil {
		return o, err
	}
	if _, err := git("add", "-A"); err != nil {
		return o, err
	}
	if _, err := git("commit", "-qm", "first"); err != nil {
		return o, err
	}
	results := filepath.Join(tmp, "results")
	args := append([]string{"fn", "eval", pkg, "--results-dir", results}, fn...)
	if len(cfg.Args) > 0 {
		keys := make([]string, 0, len(cfg.Args))
		for k := range cfg.Args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		args = append(args, "--")
		for _, k := range keys {
			args = append(args, k+"="+cfg.Args[k])
		}
	}
	var firstDiff string
	for i := 0; i < 2; i++ {
		if err := os.RemoveAll(results); err != nil {
			return o, err
		}
		if err := os.Mkdir(results, 0o755); err != nil {
			return o, err
		}
		cmd := exec.Command(kpt, args...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		o.Output = out.String()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			return o, fmt.Errorf("kpt %s: %w", strings.Join(args, " "), err)
		}
		o.ExitCode = cmd.ProcessState.ExitCode()
		if o.ExitCode != 0 {
			files, err := os.ReadDir(results)
			if err != nil {
				return o, err
			}
			if len(files) != 1 {
				return o, fmt.Errorf("kpt wrote %d results files, want 1:\n%s", len(files), o.Output)
			}
			b, err := os.ReadFile(filepath.Join(results, files[0].Name()))
			if err != nil {
				return o, err
			}
			o.Results = nameFunction(strings.TrimSpace(string(b)), fn, cfg.Image)
			return o, nil
		}
		if _, err := git("add", "-A"); err != nil {
			return o, err
		}
		d, err := git("diff", "HEAD")
		if err != nil {
			return o, err
		}
		if i == 0 {
			firstDiff = d
			continue
		}
		if d != firstDiff {
			return o, fmt.Errorf("the second run changed the package again:\n--- after the first run\n%s\n--- after the second\n%s", firstDiff, d)
		}
	}
	o.Diff = strings.TrimSpace(firstDiff)
	return o, nil
}

// nameFunction names the function in kpt's results as image, whichever way it ran: kpt
// writes `exec: PATH` for an exec function and the image reference it was given otherwise.
func nameFunction(results string, fn []string, image string) string {
	if len(fn) != 2 {
		return results
	}
	switch fn[0] {
	case "--exec":
		return strings.ReplaceAll(results, "exec: "+fn[1], "image: "+image)
	case "--image":
		return strings.ReplaceAll(results, "image: "+fn[1], "image: "+image)
	}
	return results
}
