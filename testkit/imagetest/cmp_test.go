package imagetest_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/internal/ociimage"
	"github.com/sparkui/sparkui/testkit/argocdcmp"
)

// TestCMPImage: the Argo CD plugin sidecar image that `make cmp-image-tar` writes, run by
// containerd as the sidecar would run the plugin's generate command. The image holds
// plugin.yaml where argocd-cmp-server reads it, byte-identical to cmp/plugin.yaml, and its user
// and PATH are the ones the chart's sidecar runs with; then, in a private containerd (runc,
// read-only root, user 999), `sparkui-cmp generate` — the plugin's generate command, resolved
// through the image's PATH — runs in the Application's directory (the received repository
// bind-mounted, the working directory set to the app's path) with the repo server's
// environment (testkit/argocdcmp), and prints exactly the manifests cmp/testdata/expected.yaml
// holds (cmp's TestPluginGenerate, run with the binaries on the host).
func TestCMPImage(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("make", "-s", "cmp-image-tar", "IMAGE_OUT="+out, "PLATFORMS="+host.OS+"/"+host.Architecture)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make cmp-image-tar: %v\n%s", err, b)
	}
	const name = "sparkui-argocd-cmp"
	tarPath := filepath.Join(out, name+".oci.tar")
	_, desc, idx := layoutIndex(t, tarPath, name)
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index of %s: %v %+v", tarPath, err, im)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "999:999" || fmt.Sprint(cf.Config.Env) != "[PATH=/usr/local/bin]" || fmt.Sprint(cf.Config.Entrypoint) != "[/var/run/argocd/argocd-cmp-server]" {
		t.Errorf("config: user %q env %v entrypoint %v", cf.Config.User, cf.Config.Env, cf.Config.Entrypoint)
	}
	files := layerFiles(t, img)
	plugin, err := os.ReadFile(filepath.Join(root, "cmp", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files[ociimage.CMPPluginPath], plugin) {
		t.Errorf("/%s in the image is not cmp/plugin.yaml:\n%s", ociimage.CMPPluginPath, files[ociimage.CMPPluginPath])
	}
	hostDir := filepath.Join(out, host.OS+"-"+host.Architecture)
	for _, b := range []string{"sparkui-fn", "sparkui-cmp"} {
		want, err := os.ReadFile(filepath.Join(hostDir, b))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files["usr/local/bin/"+b], want) {
			t.Errorf("/usr/local/bin/%s in the image is not the built %s", b, b)
		}
	}

	c := startContainerd(t)
	if _, err := c.ctr("images", "import", tarPath); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.image(t, ref(name)); !ok || got.digest != desc.Digest.String() {
		t.Fatalf("ctr images ls: %s is %+v, want %s", ref(name), got, desc.Digest)
	}

	// The repository as the cmp-server receives it, readable by user 999.
	repo := filepath.Join(t.TempDir(), "repo")
	copyTree(t, filepath.Join(root, "cmp", "testdata", "repo"), repo)
	app := argocdcmp.App{Name: "wordcount", Namespace: "spark-jobs", Project: "default",
		Revision: "3f2a9c1e5b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a", RepoURL: "https://git.example.com/data/spark-apps.git",
		Path: "apps/wordcount", TargetRevision: "main", KubeVersion: "1.37.2", APIVersions: []string{"v1", "apps/v1"}}
	p, err := argocdcmp.Read(filepath.Join(root, "cmp", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const mnt = "/tmp/_cmp_server/repo" // where the cmp-server unpacks (ARGOCD_CMP_WORKDIR's default /tmp, then _cmp_server)
	args := []string{"--address", c.sock, "--namespace", namespace, "run", "--rm", "--read-only",
		"--runc-root", filepath.Join(c.dir, "runc"), "--fifo-dir", filepath.Join(c.dir, "fifo"),
		"--mount", "type=bind,src=" + repo + ",dst=" + mnt + ",options=rbind:ro",
		"--cwd", mnt + "/" + app.Path}
	for _, e := range app.Env() {
		args = append(args, "--env", e)
	}
	args = append(args, ref(name), fmt.Sprintf("sparkui-cmp-%d", os.Getpid()))
	args = append(args, append(append([]string{}, p.Spec.Generate.Command...), p.Spec.Generate.Args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // ARGOCD_EXEC_TIMEOUT
	defer cancel()
	run := exec.CommandContext(ctx, "ctr", args...)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("ctr run … %s: %v\nstderr: %s", strings.Join(p.Spec.Generate.Command, " "), err, stderr.String())
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(strings.TrimSuffix(stdout.String(), "\n")), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("the image's generate printed no YAML stream: %v\n%s", err, stdout.String())
	}
	var manifests []string
	for _, n := range nodes {
		manifests = append(manifests, n.MustString())
	}
	want, err := os.ReadFile(filepath.Join(root, "cmp", "testdata", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(manifests, "---\n"); got != string(want) {
		t.Errorf("generate in the image differs from cmp/testdata/expected.yaml:\n%s", cmp.Diff(string(want), got))
	}
}

// layerFiles is the content of every entry of img's one layer, by path; a binary under
// usr/local/bin must be executable.
func layerFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v", len(layers), err)
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
		if strings.HasPrefix(hdr.Name, "usr/local/bin/") && hdr.Typeflag == tar.TypeReg && hdr.Mode&0o111 == 0 {
			t.Errorf("/%s is not executable (mode %o)", hdr.Name, hdr.Mode)
		}
	}
	return files
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if err := os.MkdirAll(filepath.Join(dst, rel), 0o755); err != nil {
				return err
			}
			return os.Chmod(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The temporary directory above the repository must let user 999 through too.
	if err := os.Chmod(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
}
