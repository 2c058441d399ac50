package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteParentStderr: the lines reach a parent's stderr that is a pipe, or a file opened
// for append, whole; never a file the parent writes at its own offset (they would be
// overwritten), nor a missing descriptor. The parent is faked as a /proc/<pid> directory.
func TestWriteParentStderr(t *testing.T) {
	fake := func(t *testing.T, target string, flags int) string {
		t.Helper()
		proc := t.TempDir()
		for _, d := range []string{"fd", "fdinfo"} {
			if err := os.Mkdir(filepath.Join(proc, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if target != "" {
			if err := os.Symlink(target, filepath.Join(proc, "fd", "2")); err != nil {
				t.Fatal(err)
			}
		}
		info := fmt.Sprintf("pos:\t0\nflags:\t%o\nmnt_id:\t1\n", flags)
		if err := os.WriteFile(filepath.Join(proc, "fdinfo", "2"), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
		return proc
	}
	msg := []byte("sparkui-fn: [error] … [SUI014] invalid functionConfig\n")
	for _, c := range []struct {
		name  string
		flags int
		want  bool
	}{
		{"append", syscall.O_WRONLY | syscall.O_APPEND | syscall.O_CREAT, true},
		{"truncate", syscall.O_WRONLY | syscall.O_CREAT | syscall.O_TRUNC, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "err.log")
			if err := os.WriteFile(file, []byte("helm: "), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := writeParentStderr(fake(t, file, c.flags), msg); got != c.want {
				t.Errorf("written = %t, want %t", got, c.want)
			}
			b, _ := os.ReadFile(file)
			want := "helm: "
			if c.want {
				want += string(msg)
			}
			if string(b) != want {
				t.Errorf("file holds %q, want %q", b, want)
			}
		})
	}
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		if !writeParentStderr(fake(t, fmt.Sprintf("/proc/self/fd/%d", w.Fd()), syscall.O_WRONLY), msg) {
			t.Fatal("not written to a pipe")
		}
		got := make([]byte, len(msg))
		if _, err := r.Read(got); err != nil || string(got) != string(msg) {
			t.Errorf("pipe got %q (%v), want %q", got, err, msg)
		}
	})
	t.Run("no descriptor", func(t *testing.T) {
		if writeParentStderr(fake(t, "", 0), msg) {
			t.Error("written without a descriptor")
		}
	})
}
