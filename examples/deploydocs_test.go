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
