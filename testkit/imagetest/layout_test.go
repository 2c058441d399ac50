package imagetest_test

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/sparkui/sparkui/internal/ociimage"
)

func TestLayout(t *testing.T) {
	out := imageOut(t)
	for _, name := range imageNames {
		t.Run(name, func(t *testing.T) {
			a := filepath.Join(out, name+".oci.tar")
			b := filepath.Join(filepath.Dir(out), "b", name+".oci.tar")
			if sa, sb := fileSHA(t, a), fileSHA(t, b); sa != sb {
				t.Errorf("two runs of make image-tar differ: %s %s, %s %s", a, sa, b, sb)
			}
			_, desc, idx := layoutIndex(t, a, name)
			t.Logf("%s: image index %s", ref(name), desc.Digest)
			// The digest make image-tar prints is the one to pin (docs/images.md).
			if line := a + " " + desc.Digest.String() + "\n"; !strings.Contains(builds.out, line) {
				t.Errorf("make image-tar did not print %q:\n%s", line, builds.out)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			want := labels(t, name)
			if diff := cmp.Diff(want, im.Annotations); diff != "" {
				t.Errorf("image index annotations (-want +got):\n%s", diff)
			}
			var got []string
			for _, m := range im.Manifests {
				if m.Platform == nil || m.MediaType != types.OCIManifestSchema1 {
					t.Errorf("manifest %s: media type %s, platform %v", m.Digest, m.MediaType, m.Platform)
					continue
				}
				got = append(got, m.Platform.String())
				img, err := idx.Image(m.Digest)
				if err != nil {
					t.Fatal(err)
				}
				checkImage(t, img, name, *m.Platform, filepath.Join(out, m.Platform.OS+"-"+m.Platform.Architecture, name), want)
			}
			sort.Strings(got)
			if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, got); diff != "" {
				t.Errorf("platforms of the image index (-want +got):\n%s", diff)
			}
		})
	}
}

// checkImage checks one platform's image: config and one layer holding /etc/passwd,
// /etc/group and exactly the binary the build made for that platform.
func checkImage(t *testing.T, img v1.Image, name string, p v1.Platform, binPath string, wantLabels map[string]string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture || cf.Config.User != ociimage.User ||
		strings.Join(cf.Config.Entrypoint, " ") != "/"+name {
		t.Errorf("%s config: os/arch %s/%s (descriptor %s), user %q, entrypoint %v", p, cf.OS, cf.Architecture, p, cf.Config.User, cf.Config.Entrypoint)
	}
	if diff := cmp.Diff(wantLabels, cf.Config.Labels); diff != "" {
		t.Errorf("%s config labels (-want +got):\n%s", p, diff)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: %d layers, %v", p, len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[hdr.Name] = data
		if hdr.Name == name && hdr.Mode&0o111 == 0 {
			t.Errorf("%s: /%s is not executable (mode %o)", p, name, hdr.Mode)
		}
	}
	want, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files[name], want) {
		t.Errorf("%s: /%s in the layer (%d bytes) is not %s (%d bytes)", p, name, len(files[name]), binPath, len(want))
	}
	if !bytes.Contains(files["etc/passwd"], []byte("\nnobody:x:65534:65534:")) || !bytes.Contains(files["etc/passwd"], []byte("\nnonroot:x:65532:65532:")) {
		t.Errorf("%s: /etc/passwd lacks nobody or nonroot:\n%s", p, files["etc/passwd"])
	}
	if len(files) != 4 { // etc/, etc/group, etc/passwd, the binary
		keys := make([]string, 0, len(files))
		for k := range files {
			keys = append(keys, k)
		}
		t.Errorf("%s: layer holds %v", p, keys)
	}
}
