// Package imagetest_test checks the images `make image-tar` writes with the clients users load,
// push and run them with, for real:
//
//   - TestLayout (layout_test.go): two independent runs of `make image-tar` give byte-identical tarballs; each
//     holds one multi-platform image (index.json → one OCI image index named by the reference,
//     one manifest per platform, OCI labels on the index and every config), whose layers hold
//     exactly the binaries the build made.
//   - TestContainerd (containerd_test.go): Debian's containerd 1.6 (a private instance: own root, state, socket and
//     config, CRI off) imports each tarball with `ctr images import`, plain and
//     --all-platforms, names the image index, and `ctr run` (runc) runs the machine's platform:
//     the function's output on a ResourceList (runtime image pinned by digest) is
//     byte-identical to the binary's own; the runtime answers --version and its startup probe.
//   - TestRegistry (registry_test.go): the distribution registry (built from its Go module, `make registry`)
//     on loopback takes a push of each tarball from go-containerregistry, `crane push` and
//     `skopeo copy --all --preserve-digests` (the commands docs/images.md gives); pulled back by
//     tag and by digest the digests are the layout's. Then
//     `kpt fn eval --image <registry>/sparkui-fn@sha256:…` with podman (a private store and
//     configuration) prints exactly examples/kpt-imperative's expected.yaml, the output of the
//     binary run by `--exec`.
//
// A missing tool fails the test with the command that installs it; it never skips.
package imagetest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/sparkui/sparkui/internal/ociimage"
	sparkuiversion "github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/testkit/imagetest"
)

// What the Makefile's image-tar target builds: REPO, PLATFORMS.
const repo = "ghcr.io/sparkui"

var (
	imageNames = []string{"sparkui-fn", "sparkui-runtime"}
	platforms  = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	// host is the machine's platform: the one containerd and podman pick and run.
	host = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
)

var root, version string

func TestMain(m *testing.M) {
	var err error
	if root, err = filepath.Abs("../.."); err == nil {
		var v []byte
		v, err = os.ReadFile(filepath.Join(root, "VERSION"))
		version = strings.TrimSpace(string(v))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagetest:", err)
		os.Exit(2)
	}
	code := m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// builds holds the two runs of `make image-tar`, made once for all tests.
var builds struct {
	once sync.Once
	dir  string // holds a/ and b/, each an IMAGE_OUT
	out  string // what the first run printed
	err  error
}

// imageOut runs `make image-tar` twice (once per package test run), each into its own
// IMAGE_OUT, and returns the first one's directory.
func imageOut(t *testing.T) string {
	t.Helper()
	builds.once.Do(func() {
		if builds.dir, builds.err = os.MkdirTemp("", "sparkui-images-"); builds.err != nil {
			return
		}
		for _, out := range []string{"a", "b"} {
			cmd := exec.Command("make", "-s", "image-tar", "IMAGE_OUT="+filepath.Join(builds.dir, out))
			cmd.Dir = root
			b, err := cmd.CombinedOutput()
			if err != nil {
				builds.err = fmt.Errorf("make image-tar IMAGE_OUT=%s: %v\n%s", out, err, b)
				return
			}
			if out == "a" {
				builds.out = string(b)
			}
		}
	})
	if builds.err != nil {
		t.Fatal(builds.err)
	}
	return filepath.Join(builds.dir, "a")
}

func ref(name string) string {
	if name == "sparkui-runtime" {
		// The runtime is tagged by its contract (internal/version.RuntimeImage, the Makefile's RUNTIME_TAG).
		return sparkuiversion.RuntimeImage()
	}
	return repo + "/" + name + ":" + version
}

// labels is what every index and config of image name must carry. The revision is the commit
// when the work tree is clean, and absent otherwise (the Makefile's REVISION).
func labels(t *testing.T, name string) map[string]string {
	want := map[string]string{
		"org.opencontainers.image.title":    name,
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.source":   "https://github.com/sparkui/sparkui",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	diff := exec.Command("git", "diff", "--quiet", "HEAD")
	diff.Dir = root
	if diff.Run() == nil {
		head := exec.Command("git", "rev-parse", "HEAD")
		head.Dir = root
		out, err := head.Output()
		if err != nil {
			t.Fatalf("git rev-parse HEAD: %v", err)
		}
		want["org.opencontainers.image.revision"] = strings.TrimSpace(string(out))
	}
	return want
}

// layoutIndex unpacks a tarball into a directory and returns the layout and its one image
// index, checking index.json on the way.
func layoutIndex(t *testing.T, tarPath, name string) (layout.Path, v1.Descriptor, v1.ImageIndex) {
	t.Helper()
	dir := t.TempDir()
	untar(t, tarPath, dir)
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("%s: index.json holds %d descriptors, want one image index", tarPath, len(im.Manifests))
	}
	d := im.Manifests[0]
	if d.MediaType != types.OCIImageIndex {
		t.Errorf("%s: index.json's descriptor is a %s, want an image index", tarPath, d.MediaType)
	}
	wantAnn := map[string]string{ociimage.AnnotationRefName: ref(name)[strings.LastIndex(ref(name), ":")+1:], ociimage.AnnotationContainerdName: ref(name)}
	if diff := cmp.Diff(wantAnn, d.Annotations); diff != "" {
		t.Errorf("%s: index.json descriptor annotations (-want +got):\n%s", tarPath, diff)
	}
	idx, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return p, d, idx
}

// TestPinnedVersions: the tools this package runs are the ones `make registry` and `make crane`
// build.
func TestPinnedVersions(t *testing.T) {
	for _, c := range []struct{ file, re, want string }{
		{"testkit/registry/build-registry.sh", `(?m)^REGISTRY_VERSION=(\S+)$`, imagetest.RegistryVersion},
		{"Makefile", `(?m)^CRANE_VERSION := (\S+)$`, CraneVersion},
	} {
		b, err := os.ReadFile(filepath.Join(root, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(c.re).FindSubmatch(b); m == nil || string(m[1]) != c.want {
			t.Errorf("%s pins %q, this test runs %s", c.file, m, c.want)
		}
	}
}
