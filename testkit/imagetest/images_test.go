// Package imagetest_test checks the images `make image-tar` writes with the clients users load,
// push and run them with, for real:
//
//   - TestLayout: two independent runs of `make image-tar` give byte-identical tarballs; each
//     holds one multi-platform image (index.json → one OCI image index named by the reference,
//     one manifest per platform, OCI labels on the index and every config), whose layers hold
//     exactly the binaries the build made.
//   - TestContainerd: Debian's containerd 1.6 (a private instance: own root, state, socket and
//     config, CRI off) imports each tarball with `ctr images import`, plain and
//     --all-platforms, names the image index, and `ctr run` (runc) runs the machine's platform:
//     the function's output on a ResourceList (runtime image pinned by digest) is
//     byte-identical to the binary's own; the runtime answers --version and its startup probe.
//   - TestRegistry: the distribution registry (built from its Go module, `make registry`)
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
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/ociimage"
	"github.com/sparkui/sparkui/internal/sidecar"
	sparkuiversion "github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/testkit/imagetest"
	"github.com/sparkui/sparkui/testkit/testcluster"
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

// need returns the path of a command, failing the test with the command that installs it.
func need(t *testing.T, bin, install string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err != nil {
		t.Fatalf("%s is required and not on PATH: %s", bin, install)
	}
	return p
}

const aptContainerd = "apt-get install -y containerd runc"

// containerd is a private containerd: its own root, state, socket and configuration (CRI off),
// so it never meets the machine's containerd or another test's.
type containerd struct {
	dir, sock string
	cmd       *exec.Cmd
	log       *bytes.Buffer
}

func startContainerd(t *testing.T) *containerd {
	t.Helper()
	bin := need(t, "containerd", aptContainerd)
	need(t, "ctr", aptContainerd)
	need(t, "runc", aptContainerd)
	need(t, "containerd-shim-runc-v2", aptContainerd)
	dir := t.TempDir()
	c := &containerd{dir: dir, sock: filepath.Join(dir, "containerd.sock"), log: &bytes.Buffer{}}
	// Every path containerd 1.6 writes besides the shim's socket (under /run/containerd/s,
	// named by a hash of this socket's address) is under dir: root, state, the opt plugin's
	// directory (else /opt/containerd), and, given to `ctr run` (run below), runc's state
	// (else /run/containerd/runc/<namespace>) and ctr's IO fifos (else /run/containerd/fifo).
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.sock, c.sock+".ttrpc", filepath.Join(dir, "opt"))
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "--config", cfg)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.removeContainers(t)
		imagetest.Stop(t, "containerd", c.cmd)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.ctr("version"); err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer on %s within 30 s:\n%s", c.sock, c.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// removeContainers kills and removes what a failed test left running: a task's shim outlives
// containerd, and its container keeps a snapshot mounted under the test's directory.
func (c *containerd) removeContainers(t *testing.T) {
	tasks, _ := c.ctr("tasks", "ls", "--quiet")
	for _, id := range strings.Fields(tasks) {
		t.Logf("killing task %s left by the test", id)
		c.ctr("tasks", "kill", "--signal", "SIGKILL", id)
		for i := 0; i < 50; i++ {
			if _, err := c.ctr("tasks", "rm", "--force", id); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	containers, _ := c.ctr("containers", "ls", "--quiet")
	for _, id := range strings.Fields(containers) {
		if _, err := c.ctr("containers", "rm", id); err != nil {
			t.Errorf("removing container %s: %v", id, err)
		}
	}
}

// The namespace the images are imported into: the one the kubelet's CRI uses, as users run it.
const namespace = "k8s.io"

func (c *containerd) ctr(args ...string) (string, error) {
	cmd := exec.Command("ctr", append([]string{"--address", c.sock, "--namespace", namespace}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("ctr %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// image is one row of `ctr images ls` (REF TYPE DIGEST SIZE PLATFORMS LABELS).
type ctrImage struct{ mediaType, digest, platforms string }

func (c *containerd) image(t *testing.T, ref string) (ctrImage, bool) {
	t.Helper()
	out, err := c.ctr("images", "ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == ref {
			return ctrImage{mediaType: f[1], digest: f[2], platforms: f[5]}, true
		}
	}
	return ctrImage{}, false
}

// run runs the image with `ctr run --rm` (runc; read-only root filesystem, as the Pod specs
// sparkui writes) and returns its stdout. args, when given, are the whole command line: ctr
// replaces the image's entrypoint with them. stdin, when given, is written only once the task runs:
// ctr 1.6 reads stdin as soon as it creates the task's IO and only learns how to close the
// task's stdin after the task exists (cmd/ctr/commands/tasks/tasks_unix.go, NewTask sets
// stdinC.closer after container.NewTask), so an input that ends before that leaves the task
// waiting for an EOF that never comes.
func (c *containerd) run(t *testing.T, ref, id string, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.sock, "--namespace", namespace,
		"run", "--rm", "--read-only", "--runc-root", filepath.Join(c.dir, "runc"), "--fifo-dir", filepath.Join(c.dir, "fifo"),
		ref, id}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var in io.WriteCloser
	if stdin != nil {
		var err error
		if in, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if in != nil {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			out, _ := c.ctr("tasks", "ls")
			if running(out, id) {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				cmd.Wait()
				t.Fatalf("task %s not running after a minute:\n%s\nctr: %s", id, out, stderr.String())
			}
		}
		in.Write(stdin)
		in.Close()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ctr run %s %s: %v\nstderr: %s", ref, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func running(tasksLs, id string) bool {
	for _, line := range strings.Split(tasksLs, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
			return true
		}
	}
	return false
}

// resourceList is examples/spark-submit as the ResourceList a KRM orchestrator sends, with
// spec.runtime.image set to runtimeImage.
func resourceList(t *testing.T, runtimeImage string) []byte {
	t.Helper()
	config, err := kyaml.ReadFile(filepath.Join(root, "examples/spark-submit/fn-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := config.PipeE(kyaml.Lookup("spec", "runtime"), kyaml.SetField("image", kyaml.NewStringRNode(runtimeImage))); err != nil {
		t.Fatal(err)
	}
	manifests, err := os.ReadFile(filepath.Join(root, "examples/spark-submit/manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	items, err := kio.FromBytes(manifests)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := kio.ByteWriter{Writer: &b, FunctionConfig: config, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hostRun runs the binary the build made for this machine, as the reference output.
func hostRun(t *testing.T, bin string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return out
}

func TestContainerd(t *testing.T) {
	out := imageOut(t)
	c := startContainerd(t)
	// The runtime image pinned by the digest of the runtime tarball's image index, as
	// docs/images.md tells users to pin it: the function writes it into the Pod as given.
	_, rt, _ := layoutIndex(t, filepath.Join(out, "sparkui-runtime.oci.tar"), "sparkui-runtime")
	pinned := ref("sparkui-runtime") + "@" + rt.Digest.String()
	input := resourceList(t, pinned)
	hostDir := filepath.Join(out, host.OS+"-"+host.Architecture)
	wantFn := hostRun(t, filepath.Join(hostDir, "sparkui-fn"), input)
	if !bytes.Contains(wantFn, []byte("kind: ResourceList")) || !bytes.Contains(wantFn, []byte("-ui-svc")) ||
		!bytes.Contains(wantFn, []byte("image: "+pinned+"\n")) || bytes.Contains(wantFn, []byte("severity: error")) {
		t.Fatalf("sparkui-fn on examples/spark-submit with runtime.image %s wrote no UI Service, not that image, or an error:\n%s", pinned, wantFn)
	}
	for i, mode := range []string{"plain", "--all-platforms"} {
		for _, name := range imageNames {
			tarPath := filepath.Join(out, name+".oci.tar")
			_, desc, idx := layoutIndex(t, tarPath, name)
			args := []string{"images", "import"}
			if mode != "plain" {
				args = append(args, mode)
			}
			got, err := c.ctr(append(args, tarPath)...)
			if err != nil {
				t.Fatal(err)
			}
			// ctr unpacks what it named, for the machine's platform: one line, the index.
			if want := fmt.Sprintf("unpacking %s (%s)...done\n", ref(name), desc.Digest); got != want {
				t.Errorf("ctr images import %s %s printed %q, want %q", mode, name, got, want)
			}
			img, ok := c.image(t, ref(name))
			if !ok {
				t.Fatalf("ctr images import %s: no image %s", mode, ref(name))
			}
			if img.digest != desc.Digest.String() || img.mediaType != string(types.OCIImageIndex) || img.platforms != "linux/amd64,linux/arm64" {
				t.Errorf("ctr images ls after a %s import: %s is %+v, want the image index %s for linux/amd64,linux/arm64", mode, ref(name), img, desc.Digest)
			}
			check, err := c.ctr("images", "check", "name=="+ref(name))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(check, "complete (2/2)") || !strings.Contains(check, " true") {
				t.Errorf("ctr images check %s after a %s import: not complete and unpacked for %s:\n%s", ref(name), mode, host, check)
			}
			// The manifest containerd resolves for this machine is the index's one for it.
			im, _ := idx.IndexManifest()
			var hostManifest v1.Hash
			for _, m := range im.Manifests {
				if m.Platform.Equals(host) {
					hostManifest = m.Digest
				}
			}
			raw, err := c.ctr("content", "get", hostManifest.String())
			if err != nil {
				t.Errorf("the %s manifest %s of %s is not in containerd's store: %v", host, hostManifest, ref(name), err)
			} else if h, _, _ := v1.SHA256(strings.NewReader(raw)); h != hostManifest {
				t.Errorf("containerd's copy of %s hashes to %s", hostManifest, h)
			}

			id := fmt.Sprintf("sparkui-imagetest-%d-%d-%s", os.Getpid(), i, name)
			switch name {
			case "sparkui-fn":
				gotFn := c.run(t, ref(name), id, input)
				if !bytes.Equal(gotFn, wantFn) {
					t.Errorf("sparkui-fn in containerd (%s import) differs from %s:\n%s", mode, filepath.Join(hostDir, "sparkui-fn"), cmp.Diff(string(wantFn), string(gotFn)))
				}
			case "sparkui-runtime":
				if got, want := string(c.run(t, ref(name), id, nil, "/"+name, "--version")), "sparkui-runtime "+version+"\n"; got != want {
					t.Errorf("sparkui-runtime --version in containerd: %q, want %q", got, want)
				}
				// The runtime's startupProbe execs this in the image; it must exit 0 or the
				// driver never starts.
				probe := sidecar.StartupProbe.Command
				if probe[0] != "/"+name {
					t.Errorf("the startupProbe execs %s, the image's binary is /%s", probe[0], name)
				}
				c.run(t, ref(name), id+"-probe", nil, probe...)
			}
			if _, err := c.ctr("images", "rm", "--sync", ref(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

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

// runIn runs a command at the repository root and returns its stdout.
func runIn(t *testing.T, env []string, bin string, args ...string) []byte {
	t.Helper()
	out, err := runCmd(env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runCmd(env []string, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = root, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

func untar(t *testing.T, path, dst string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(p, dst+string(filepath.Separator)) {
			t.Fatalf("%s: entry %q leaves the directory", path, hdr.Name)
		}
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
