package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The real binaries, the Makefile and the clients (containerd, the distribution registry,
// podman under kpt) are tested in ./imagetest. These tests pin the packaging itself.

var testLabels = Labels{Title: "sparkui-fn", Version: "9.8.7", Source: "https://example.invalid/sparkui", Revision: "0123456789abcdef0123456789abcdef01234567"}

func testIndex(t *testing.T) v1.ImageIndex {
	t.Helper()
	var imgs []v1.Image
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := Build(Spec{Name: "sparkui-fn", Binary: []byte("not a binary: " + arch), Platform: v1.Platform{OS: "linux", Architecture: arch}, Labels: testLabels})
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := Index(testLabels, imgs...)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// TestRecordedDigest pins the packaging: the same binaries and labels give this image index,
// on any machine, today and after a dependency update. A change here changes every published
// digest: make it on purpose, and say so in the release notes.
func TestRecordedDigest(t *testing.T) {
	const want = "sha256:107aead267e534f35e0b5cc5dcb5c13f2a96a57c3a372c17f7fb0a4488e3b118"
	d, err := testIndex(t).Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != want {
		t.Errorf("image index digest %s, recorded %s", d, want)
	}
}

func TestIndex(t *testing.T) {
	idx := testIndex(t)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex || len(im.Manifests) != 2 {
		t.Fatalf("index %s with %d manifests", im.MediaType, len(im.Manifests))
	}
	if diff := cmp.Diff(testLabels.Map(), im.Annotations); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}
	for i, arch := range []string{"amd64", "arm64"} {
		m := im.Manifests[i]
		if m.Platform == nil || m.Platform.OS != "linux" || m.Platform.Architecture != arch || m.MediaType != types.OCIManifestSchema1 {
			t.Errorf("manifest %d: %s %+v", i, m.MediaType, m.Platform)
		}
		if m.ArtifactType != "" {
			t.Errorf("manifest %d: artifactType %q (skopeo 1.9 cannot copy such an index unchanged)", i, m.ArtifactType)
		}
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != arch || cf.Config.User != User || cf.Config.Entrypoint[0] != "/sparkui-fn" || !cf.Created.Time.Equal(epoch) {
			t.Errorf("%s config: %s user %q entrypoint %v created %v", arch, cf.Architecture, cf.Config.User, cf.Config.Entrypoint, cf.Created)
		}
		if diff := cmp.Diff(testLabels.Map(), cf.Config.Labels); diff != "" {
			t.Errorf("%s config labels (-want +got):\n%s", arch, diff)
		}
	}

	dup, _ := Build(Spec{Name: "x", Platform: v1.Platform{OS: "linux", Architecture: "amd64"}})
	if _, err := Index(testLabels, dup, dup); err == nil || !strings.Contains(err.Error(), "two images for platform linux/amd64") {
		t.Errorf("two images for one platform: %v", err)
	}
	if _, err := Index(testLabels); err == nil {
		t.Error("an index of no image: no error")
	}
}

func TestLabelsWithoutRevision(t *testing.T) {
	l := testLabels
	l.Revision = ""
	if _, ok := l.Map()["org.opencontainers.image.revision"]; ok {
		t.Error("an empty revision is written as a label")
	}
}

func TestRefAnnotations(t *testing.T) {
	got, err := RefAnnotations("ghcr.io/sparkui/sparkui-fn:0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{AnnotationRefName: "0.1.0", AnnotationContainerdName: "ghcr.io/sparkui/sparkui-fn:0.1.0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"ghcr.io/sparkui/sparkui-fn", "ghcr.io/sparkui/sparkui-fn@sha256:" + strings.Repeat("a", 64), "Not A Ref:1"} {
		if _, err := RefAnnotations(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("RefAnnotations(%q): %v, want an error naming it", bad, err)
		}
	}
}

// TestLayoutTar: index.json holds one descriptor, the image index, named; the tar's bytes
// depend only on the images (fixed order, owners, modes, times).
func TestLayoutTar(t *testing.T) {
	idx := testIndex(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	for _, p := range []string{a, b} {
		if err := WriteLayoutTar(p, "ghcr.io/sparkui/sparkui-fn:9.8.7", idx); err != nil {
			t.Fatal(err)
		}
	}
	ta, _ := os.ReadFile(a)
	tb, _ := os.ReadFile(b)
	if !bytes.Equal(ta, tb) {
		t.Error("two writes of one index differ")
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(ta))
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s: uid %d gid %d uname %q mtime %v", hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.ModTime)
		}
		names = append(names, hdr.Name)
		data, _ := io.ReadAll(tr)
		files[hdr.Name] = data
	}
	if names[0] != "blobs/" || names[len(names)-2] != "index.json" || names[len(names)-1] != "oci-layout" {
		t.Errorf("tar entries %v", names)
	}
	var index v1.IndexManifest
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != d || index.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json: %+v", index.Manifests)
	}
	if got := index.Manifests[0].Annotations; got[AnnotationContainerdName] != "ghcr.io/sparkui/sparkui-fn:9.8.7" || got[AnnotationRefName] != "9.8.7" {
		t.Errorf("index.json annotations %v", got)
	}
	if err := WriteLayoutTar(filepath.Join(dir, "c.tar"), "ghcr.io/sparkui/sparkui-fn", idx); err == nil {
		t.Error("a reference without a tag: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "c.tar")); !os.IsNotExist(err) {
		t.Errorf("a failed write left c.tar: %v", err)
	}
}

// TestLayer: the layer holds /etc/group, /etc/passwd (the users kpt and the image run as) and
// the binary, owned by root, fixed times.
func TestLayer(t *testing.T) {
	img, err := Build(Spec{Name: "sparkui-runtime", Binary: []byte("bin"), Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Labels: testLabels})
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got = append(got, strings.Join([]string{hdr.Name, string(rune(hdr.Typeflag)), strings.TrimSpace(string(data))}, "|"))
		if hdr.Uid != 0 || !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s: uid %d mtime %v", hdr.Name, hdr.Uid, hdr.ModTime)
		}
		if hdr.Name == "sparkui-runtime" && hdr.Mode != 0o755 {
			t.Errorf("binary mode %o", hdr.Mode)
		}
	}
	want := []string{
		"etc/|5|",
		"etc/group|0|" + strings.TrimSpace(string(group)),
		"etc/passwd|0|" + strings.TrimSpace(string(passwd)),
		"sparkui-runtime|0|bin",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer (-want +got):\n%s", diff)
	}
	for _, user := range []string{"nobody:x:65534:65534:", "nonroot:x:65532:65532:"} {
		if !bytes.Contains(passwd, []byte("\n"+user)) {
			t.Errorf("/etc/passwd lacks %s", user)
		}
	}
}
