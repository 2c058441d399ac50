package testnode

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/sparkui/sparkui/internal/ociimage"
)

// ImportImage builds img with internal/ociimage for this machine's platform (an index of
// one image) and imports it into the node's containerd.
func (n *Node) ImportImage(img Image) error {
	labels := ociimage.Labels{Title: img.Name, Version: "test", Source: "https://github.com/sparkui/sparkui"}
	built, err := ociimage.Build(ociimage.Spec{
		Name: img.Name, Binary: img.Binary,
		Platform: v1.Platform{OS: "linux", Architecture: runtime.GOARCH},
		Labels:   labels,
	})
	if err != nil {
		return fmt.Errorf("image %s: %w", img.Ref, err)
	}
	if built, err = withPaths(built, img); err != nil {
		return fmt.Errorf("image %s: %w", img.Ref, err)
	}
	idx, err := ociimage.Index(labels, built)
	if err != nil {
		return fmt.Errorf("image %s: %w", img.Ref, err)
	}
	path := filepath.Join(n.Dir, "images", strings.NewReplacer("/", "_", ":", "_").Replace(img.Ref)+".tar")
	if err := ociimage.WriteLayoutTar(path, img.Ref, idx); err != nil {
		return fmt.Errorf("image %s: %w", img.Ref, err)
	}
	if err := n.ctrImport(path); err != nil {
		return err
	}
	// go-containerregistry names Docker Hub images index.docker.io/…, the CRI plugin
	// docker.io/…: tag the import with the name the kubelet asks for.
	tag, err := name.NewTag(img.Ref)
	if err != nil {
		return fmt.Errorf("image %s: %w", img.Ref, err)
	}
	if tag.Name() != img.Ref {
		out, err := exec.Command("ctr", "--address", n.socket(), "-n", "k8s.io", "images", "tag", "--force", tag.Name(), img.Ref).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ctr images tag %s %s: %w: %s", tag.Name(), img.Ref, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// withPaths adds a layer holding the binary at img.Paths and img.Files (their directories
// made) and sets img.Env in the config.
func withPaths(built v1.Image, img Image) (v1.Image, error) {
	if len(img.Paths) == 0 && len(img.Env) == 0 && len(img.Files) == 0 {
		return built, nil
	}
	if len(img.Paths) > 0 || len(img.Files) > 0 {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		dirs := map[string]bool{}
		add := func(p string, mode int64, data []byte) error {
			if !strings.HasPrefix(p, "/") {
				return fmt.Errorf("path %q is not absolute", p)
			}
			p = strings.TrimPrefix(filepath.Clean(p), "/")
			var parents []string
			for d := filepath.Dir(p); d != "." && !dirs[d]; d = filepath.Dir(d) {
				dirs[d] = true
				parents = append([]string{d}, parents...)
			}
			for _, d := range parents {
				if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
					return err
				}
			}
			if err := tw.WriteHeader(&tar.Header{Name: p, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
				return err
			}
			_, err := tw.Write(data)
			return err
		}
		for _, p := range img.Paths {
			if err := add(p, 0o755, img.Binary); err != nil {
				return nil, err
			}
		}
		// Sorted: the same Files make the same layer.
		files := make([]string, 0, len(img.Files))
		for p := range img.Files {
			files = append(files, p)
		}
		sort.Strings(files)
		for _, p := range files {
			if err := add(p, 0o644, []byte(img.Files[p])); err != nil {
				return nil, err
			}
		}
		if err := tw.Close(); err != nil {
			return nil, err
		}
		data := buf.Bytes()
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		if built, err = mutate.AppendLayers(built, layer); err != nil {
			return nil, err
		}
	}
	if len(img.Env) > 0 {
		cf, err := built.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.Config.Env = append(cf.Config.Env, img.Env...)
		return mutate.ConfigFile(built, cf)
	}
	return built, nil
}

var goBuilds sync.Map // package → *goBuild

type goBuild struct {
	once sync.Once
	bin  []byte
	err  error
}

// BuildGo builds a main package of this module (e.g. "./runtime") as a static binary for
// an image, once per test binary.
func BuildGo(pkg string) ([]byte, error) {
	v, _ := goBuilds.LoadOrStore(pkg, &goBuild{})
	b := v.(*goBuild)
	b.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			b.err = err
			return
		}
		dir, err := os.MkdirTemp("", "sparkui-node-build-")
		if err != nil {
			b.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "bin")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w: %s", pkg, err, msg)
			return
		}
		b.bin, b.err = os.ReadFile(out)
	})
	return b.bin, b.err
}

func buildPause() ([]byte, error) { return BuildGo("./testkit/testnode/pause") }

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the sparkui module")
	}
	return filepath.Dir(mod), nil
}
