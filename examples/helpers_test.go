package examples_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func kustomizeBin(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("SPARKUI_KUSTOMIZE")
	if bin == "" {
		cache := os.Getenv("SPARKUI_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatalf("cannot find the kustomize CLI: SPARKUI_KUSTOMIZE is unset and %v", err)
			}
			cache = filepath.Join(home, ".cache", "sparkui")
		}
		bin = filepath.Join(cache, "bin", "kustomize-"+kustomizeVersion)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kustomize CLI %s not found (%v): run `make kustomize` first", bin, err)
	}
	return bin
}

func kptBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SPARKUI_KPT"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("kpt")
	if err != nil {
		t.Fatalf("kpt not found on $PATH (%v): install kpt 1.0.0-beta.56 or set SPARKUI_KPT", err)
	}
	return bin
}

// run runs name args in dir (root when empty) with stdin, fails the test unless it exits 0,
// and returns its stdout.
func run(t *testing.T, dir string, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	if dir == "" {
		dir = root
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("(cd %s && %s %s): %v\nstderr:\n%s\nstdout:\n%s", dir, name, strings.Join(args, " "), err, stderr.Bytes(), stdout.Bytes())
	}
	return stdout.Bytes()
}

// runExit runs name args at the root with stdin (none when nil) and returns its exit code,
// stdout and stderr; a command that cannot start fails the test.
func runExit(t *testing.T, stdin []byte, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// checkExpected compares got with dir/expected.yaml, or rewrites the file with -update.
func checkExpected(t *testing.T, dir string, got []byte) {
	t.Helper()
	path := filepath.Join(root, dir, "expected.yaml")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./examples/ -update writes it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s/expected.yaml (-want +got); go test ./examples/ -update rewrites it:\n%s",
			dir, cmp.Diff(lines(want), lines(got)))
	}
}

// sameOutput asserts that the second run printed exactly what the first printed.
func sameOutput(t *testing.T, how string, first, second []byte) {
	t.Helper()
	if !bytes.Equal(first, second) {
		t.Errorf("not idempotent: %s changed the output (-first +second):\n%s", how, cmp.Diff(lines(first), lines(second)))
	}
}

// lines splits b after each newline, so that cmp.Diff shows whole lines.
func lines(b []byte) []string { return strings.SplitAfter(string(b), "\n") }

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("%s changed files (-before +after):\n%s", what, d)
	}
}

// copyPackage copies the example package src (relative to root) into a new temporary
// directory and returns that directory.
func copyPackage(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(root, src))); err != nil {
		t.Fatal(err)
	}
	// expected.yaml is not part of the package kpt should see.
	if err := os.Remove(filepath.Join(dst, "expected.yaml")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return dst
}

// documents splits a multi-document YAML stream and sorts the documents.
func documents(b []byte) []string {
	docs := strings.Split(strings.TrimPrefix(string(b), "---\n"), "\n---\n")
	for i, d := range docs {
		docs[i] = strings.TrimSuffix(d, "\n")
	}
	sort.Strings(docs)
	return docs
}

// addedFiles asserts that an in-place kpt run wrote the objects the function added where the
// READMEs say kpt puts objects without a path annotation: <namespace>/<kind>_<name>.yaml.
func addedFiles(t *testing.T, tree map[string]string, namespace, prefix string) {
	t.Helper()
	for _, f := range []string{
		"service_" + prefix + "-ui-svc.yaml",
		"role_" + prefix + "-ui-svc-binder.yaml",
		"rolebinding_" + prefix + "-ui-svc-binder.yaml",
	} {
		if _, ok := tree[namespace+"/"+f]; !ok {
			t.Errorf("the in-place kpt run did not write %s/%s", namespace, f)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
