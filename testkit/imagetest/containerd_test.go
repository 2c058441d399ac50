package imagetest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/imagetest"
)

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
