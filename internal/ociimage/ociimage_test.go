package ociimage

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/sparkui/sparkui/internal/sidecar"
)

// TestImages builds each binary, packs it as the image `make image-tar` makes, reads the
// tarball back as an OCI layout, checks the config, and runs the binary taken out of the
// layer.
func TestImages(t *testing.T) {
	for _, name := range []string{"sparkui-runtime", "sparkui-fn"} {
		t.Run(name, func(t *testing.T) { testImage(t, name) })
	}
}

func testImage(t *testing.T, name string) {
	dir := t.TempDir()
	bin := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X github.com/sparkui/sparkui/internal/version.Version=9.8.7", "-o", bin, "../../"+strings.TrimPrefix(name, "sparkui-"))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	plat := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	img, err := Build(Spec{Name: name, Binary: data, Platform: plat, Version: "9.8.7", Source: "https://example.invalid/sparkui", Title: name})
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "runtime.tar")
	if err := WriteLayoutTar(tarPath, "ghcr.io/sparkui/"+name+":9.8.7", img); err != nil {
		t.Fatal(err)
	}

	// Read it back from the tarball, as a registry push or `crane` would.
	layoutDir := filepath.Join(dir, "layout")
	untar(t, tarPath, layoutDir)
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform == nil || im.Manifests[0].Platform.Architecture != runtime.GOARCH ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "ghcr.io/sparkui/"+name+":9.8.7" {
		t.Fatalf("index: %+v", im.Manifests)
	}
	got, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || strings.Join(cf.Config.Entrypoint, " ") != "/"+name ||
		cf.Config.Labels["org.opencontainers.image.version"] != "9.8.7" || cf.OS != "linux" {
		t.Errorf("config: user %q entrypoint %v labels %v os %q", cf.Config.User, cf.Config.Entrypoint, cf.Config.Labels, cf.OS)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != name || hdr.Mode&0o111 == 0 {
		t.Fatalf("layer entry %+v: %v", hdr, err)
	}
	extracted := filepath.Join(dir, "extracted")
	f, _ := os.OpenFile(extracted, os.O_CREATE|os.O_WRONLY, 0o755)
	io.Copy(f, tr)
	f.Close()
	out, err := exec.Command(extracted, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != name+" 9.8.7" {
		t.Errorf("binary from the layer: %q %v", out, err)
	}

	if name == "sparkui-runtime" {
		// The runtime's startupProbe execs this path with these args: it must exist in the
		// image and exit 0 at once, or the driver never starts (it waits for the probe).
		p := sidecar.StartupProbe
		if p.Command[0] != "/"+hdr.Name {
			t.Errorf("startupProbe execs %s, the image holds /%s", p.Command[0], hdr.Name)
		}
		start := time.Now()
		if out, err := exec.Command(extracted, p.Command[1:]...).CombinedOutput(); err != nil || time.Since(start) > time.Duration(p.TimeoutSeconds)*time.Second {
			t.Errorf("startupProbe %q: %v after %s: %s", p.Command, err, time.Since(start), out)
		}
	}

	// Same binary, same image: digests are reproducible.
	again, _ := Build(Spec{Name: name, Binary: data, Platform: plat, Version: "9.8.7", Source: "https://example.invalid/sparkui", Title: name})
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("digest not reproducible: %s vs %s", d1, d2)
	}
}

func untar(t *testing.T, path, dst string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, hdr.Name)
		if hdr.Typeflag == tar.TypeDir {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		out, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(out, tr)
		out.Close()
	}
}
