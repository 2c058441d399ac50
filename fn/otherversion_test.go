package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOutputIndependentOfVersion: the function built as another sparkui version renders every
// golden input byte for byte as the golden (design.md: the output depends on the runtime
// contract, never on sparkui-fn's version; the kubeflow operator resubmits an application on
// any spec change). The binary is run as kpt, kustomize, the Helm plugin and the Argo CD CMP
// run it.
func TestOutputIndependentOfVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sparkui-fn")
	build := exec.Command("go", "build", "-trimpath", "-ldflags",
		"-X github.com/sparkui/sparkui/internal/version.Version=9.9.9", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || string(out) != "sparkui-fn 9.9.9\n" {
		t.Fatalf("the build is not version 9.9.9: %q %v", out, err)
	}
	for _, in := range fixtures(t) {
		dir := filepath.Dir(in)
		want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin)
		cmd.Stdin = bytes.NewReader(src)
		got, _ := cmd.Output() // exit 1 on an error result; the output is still written
		if !bytes.Equal(got, want) {
			t.Errorf("%s: sparkui-fn 9.9.9 renders it differently from the golden", filepath.Base(dir))
		}
	}
}
