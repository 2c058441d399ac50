package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// BenchmarkRun is the whole command as the binary runs it, I/O included (BenchmarkFunction
// runs the processor under framework.Execute): 200 kubeflow SparkApplications as a
// ResourceList on stdin, as a plain stream on stdin, and as a file in standalone mode, and
// `validate` on that file. It watches the cost of the I/O layer itself.
func BenchmarkRun(b *testing.B) {
	rl := kubeflowInput(b, 200)
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(rl), OmitReaderAnnotations: true}).Read()
	if err != nil {
		b.Fatal(err)
	}
	var plain bytes.Buffer
	if err := (kio.ByteWriter{Writer: &plain}).Write(items); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	cfg, apps := filepath.Join(dir, "fn-config.yaml"), filepath.Join(dir, "apps.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(apps, plain.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		in   []byte
	}{
		{"resourcelist", nil, rl},
		{"plain", nil, plain.Bytes()},
		{"standalone", []string{cfg, apps}, nil},
		{"validate", []string{"validate", "--output", "json", apps}, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(max(len(c.in), plain.Len())))
			for i := 0; i < b.N; i++ {
				var stdout, stderr bytes.Buffer
				code := run(c.args, bytes.NewReader(c.in), &stdout, &stderr)
				if code > 1 || stdout.Len() == 0 || strings.Contains(stderr.String(), "panic") {
					b.Fatalf("exit %d, %d bytes out, stderr %s", code, stdout.Len(), stderr.String())
				}
			}
		})
	}
}
