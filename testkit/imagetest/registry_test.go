package imagetest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/sparkui/sparkui/testkit/imagetest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// CraneVersion is the crane `make crane` builds: go-containerregistry's, the version go.mod
// requires.
const CraneVersion = "v0.22.1"

const aptSkopeo = "apt-get install -y --no-install-recommends skopeo"

func TestRegistry(t *testing.T) {
	out := imageOut(t)
	addr := imagetest.StartRegistry(t)
	crane := filepath.Join(testcluster.CacheDir(), "bin", "crane-"+CraneVersion)
	if _, err := os.Stat(crane); err != nil {
		t.Fatalf("crane %s is not built (%v): run `make crane`", CraneVersion, err)
	}
	skopeo := need(t, "skopeo", aptSkopeo)
	pushed := map[string]v1.Hash{}
	for _, image := range imageNames {
		tarPath := filepath.Join(out, image+".oci.tar")
		dir, desc, idx := layoutIndex(t, tarPath, image)
		pushed[image] = desc.Digest
		// Three clients push the same tarball, each to its own repository: go-containerregistry
		// (what a Go release tool would use), and the two commands docs/images.md gives.
		for _, client := range []string{"ggcr", "crane", "skopeo"} {
			tag, err := name.NewTag(fmt.Sprintf("%s/%s/%s:%s", addr, client, image, version), name.StrictValidation)
			if err != nil {
				t.Fatal(err)
			}
			switch client {
			case "ggcr":
				err = remote.WriteIndex(tag, idx)
			case "crane":
				_, err = runCmd(nil, crane, "push", string(dir), tag.String())
			case "skopeo":
				_, err = runCmd(nil, skopeo, "copy", "--all", "--preserve-digests", "--dest-tls-verify=false",
					"oci-archive:"+tarPath, "docker://"+tag.String())
			}
			if err != nil {
				t.Fatalf("push %s with %s: %v", tag, client, err)
			}
			checkPulled(t, client, tag, desc, idx)
		}
	}

	// kpt runs the function from the registry, pinned by digest, with podman.
	kpt := need(t, "kpt", "apt-get install -y google-cloud-cli-kpt")
	need(t, "podman", imagetest.AptPodman)
	env := imagetest.PodmanEnv(t, addr)
	image := fmt.Sprintf("%s/skopeo/sparkui-fn@%s", addr, pushed["sparkui-fn"])
	args := []string{"fn", "eval", "examples/kpt-imperative", "--output", "unwrap"}
	cfg := []string{"--", "serviceType=NodePort"}
	viaImage := runIn(t, env, kpt, append(append(args, "--image", image), cfg...)...)
	viaExec := runIn(t, nil, kpt, append(append(args, "--exec", filepath.Join(out, host.OS+"-"+host.Architecture, "sparkui-fn")), cfg...)...)
	expected, err := os.ReadFile(filepath.Join(root, "examples/kpt-imperative/expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(viaImage, viaExec) || !bytes.Equal(viaImage, expected) {
		t.Errorf("kpt fn eval --image %s differs from --exec and expected.yaml:\n%s\n--- exec vs expected:\n%s",
			image, cmp.Diff(string(viaExec), string(viaImage)), cmp.Diff(string(expected), string(viaExec)))
	}
	// podman pulled what the registry holds: the index, and this machine's manifest of it.
	inspect := runIn(t, env, "podman", "image", "inspect", "--format", "{{.Digest}} {{.Os}}/{{.Architecture}} {{index .Labels \"org.opencontainers.image.version\"}}", image)
	if got, want := strings.TrimSpace(string(inspect)), fmt.Sprintf("%s %s %s", pushed["sparkui-fn"], host, version); got != want {
		t.Errorf("podman image inspect %s: %q, want %q", image, got, want)
	}
}

// checkPulled pulls tag back by tag and by digest: both give the layout's image index, byte for
// byte, and each platform resolves to the layout's manifest and layer.
func checkPulled(t *testing.T, client string, tag name.Tag, desc v1.Descriptor, idx v1.ImageIndex) {
	t.Helper()
	byTag, err := remote.Get(tag)
	if err != nil {
		t.Fatalf("pull %s (pushed with %s): %v", tag, client, err)
	}
	dig := tag.Context().Digest(desc.Digest.String())
	byDigest, err := remote.Get(dig)
	if err != nil {
		t.Fatalf("pull %s (pushed with %s): %v", dig, client, err)
	}
	for what, d := range map[string]*remote.Descriptor{"tag": byTag, "digest": byDigest} {
		if h, _, _ := v1.SHA256(bytes.NewReader(d.Manifest)); d.Digest != desc.Digest || h != desc.Digest || d.MediaType != types.OCIImageIndex {
			t.Errorf("pushed with %s, pulled by %s: %s %s (content hashes to %s), want the image index %s", client, what, d.MediaType, d.Digest, h, desc.Digest)
		}
	}
	pulled, err := byDigest.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	wantM, _ := idx.IndexManifest()
	gotM, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantM, gotM); diff != "" {
		t.Errorf("pushed with %s: the pulled index differs (-layout +registry):\n%s", client, diff)
	}
	for _, p := range platforms {
		img, err := remote.Image(tag, remote.WithPlatform(p))
		if err != nil {
			t.Fatalf("pull %s for %s: %v", tag, p, err)
		}
		want, err := idx.Image(manifestFor(t, idx, p))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := digestOf(t, img), digestOf(t, want); a != b {
			t.Errorf("%s for %s (pushed with %s): registry manifest %s, layout %s", tag, p, client, a, b)
		}
		gl, _ := img.Layers()
		wl, _ := want.Layers()
		if len(gl) != 1 || len(wl) != 1 || layerDigest(t, gl[0]) != layerDigest(t, wl[0]) {
			t.Errorf("%s for %s (pushed with %s): layers differ", tag, p, client)
		}
	}
}

func manifestFor(t *testing.T, idx v1.ImageIndex, p v1.Platform) v1.Hash {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.Equals(p) {
			return m.Digest
		}
	}
	t.Fatalf("no manifest for %s", p)
	return v1.Hash{}
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func layerDigest(t *testing.T, l v1.Layer) v1.Hash {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
