package install

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInstallFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	dst := filepath.Join(dir, "shared", "sparkui-runtime")
	if err := os.Mkdir(filepath.Dir(dst), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("binary v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	check := func(want string) {
		t.Helper()
		b, err := os.ReadFile(dst)
		st, _ := os.Stat(dst)
		if err != nil || string(b) != want || st.Mode().Perm() != 0o755 {
			t.Fatalf("installed %q mode %v: %v", b, st.Mode(), err)
		}
		ents, _ := os.ReadDir(filepath.Dir(dst))
		if len(ents) != 1 {
			t.Fatalf("temporary files left: %v", ents)
		}
	}
	check("binary v1")
	// Identical: left alone (same inode).
	before, _ := os.Stat(dst)
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(dst)
	if !os.SameFile(before, after) {
		t.Error("an identical binary was rewritten")
	}
	// A new version (the container restarted with a new image) replaces it atomically.
	if err := os.WriteFile(src, []byte("binary v2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	check("binary v2")
	if err := installFile(src, filepath.Join(dir, "missing", "x")); err == nil {
		t.Error("no error for a missing directory")
	}
}
