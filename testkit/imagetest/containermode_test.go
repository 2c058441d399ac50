package imagetest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/sparkui/sparkui/catalog"
	"github.com/sparkui/sparkui/testkit/imagetest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestCatalogContainerMode runs every kpt catalog example (catalog/examples) in container
// mode: the function image `make image-tar` built, pushed to the test's registry under the
// path and tag the examples name (ghcr.io/sparkui/sparkui-fn:<version> with the registry's
// host), run by `kpt fn eval --image` with podman; and in exec mode, with the binary that
// image holds. Both must give the same exit code, the same package diff and the same results,
// and those must be the example's .expected files.
func TestCatalogContainerMode(t *testing.T) {
	out := imageOut(t)
	addr := imagetest.StartRegistry(t)
	kpt := need(t, "kpt", "apt-get install -y google-cloud-cli-kpt")
	need(t, "podman", imagetest.AptPodman)
	_, _, idx := layoutIndex(t, filepath.Join(out, "sparkui-fn.oci.tar"), "sparkui-fn")
	path, ok := strings.CutPrefix(ref("sparkui-fn"), "ghcr.io/")
	if !ok {
		t.Fatalf("%s is not on ghcr.io", ref("sparkui-fn"))
	}
	tag, err := name.NewTag(addr+"/"+path, name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatalf("push %s: %v", tag, err)
	}
	env := imagetest.PodmanEnv(t, addr)
	bin := filepath.Join(out, host.OS+"-"+host.Architecture, "sparkui-fn")
	dirs, _ := filepath.Glob(filepath.Join(root, "catalog", "examples", "*"))
	if len(dirs) < 2 {
		t.Fatalf("catalog/examples holds %d examples", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			cfg, err := catalog.ReadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := ref("sparkui-fn"); cfg.Image != want {
				t.Fatalf("the example runs %s, the image built is %s", cfg.Image, want)
			}
			viaImage, err := catalog.Run(dir, kpt, []string{"--image", tag.String()}, env)
			if err != nil {
				t.Fatal(err)
			}
			viaExec, err := catalog.Run(dir, kpt, []string{"--exec", bin}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The one difference kpt 1.0.0-beta.56 itself makes: it records a container's stderr
			// without its last newline (`stderr: |-`), an exec function's with it (`stderr: |`),
			// the text being the same. Seen here; everything else must be identical.
			viaImage.Results = strings.ReplaceAll(viaImage.Results, "\n    stderr: |-\n", "\n    stderr: |\n")
			if viaImage.ExitCode != viaExec.ExitCode || viaImage.Diff != viaExec.Diff || viaImage.Results != viaExec.Results {
				t.Fatalf("container and exec mode differ:\n--image: exit %d\n%s%s\n%s\n--exec: exit %d\n%s%s",
					viaImage.ExitCode, viaImage.Diff, viaImage.Results, viaImage.Output, viaExec.ExitCode, viaExec.Diff, viaExec.Results)
			}
			file, got := "diff.patch", viaImage.Diff
			if viaImage.ExitCode != cfg.ExitCode {
				t.Fatalf("kpt exited %d, want %d:\n%s", viaImage.ExitCode, cfg.ExitCode, viaImage.Output)
			}
			if cfg.ExitCode != 0 {
				file, got = "results.yaml", viaImage.Results
			}
			want, err := os.ReadFile(filepath.Join(dir, ".expected", file))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(want)) != got || got == "" {
				t.Errorf("%s differs from what both modes gave:\n%s", file, got)
			}
		})
	}
}

// TestKustomizeContainerFunction: docs/deploy-kustomize.md's containerized form. The
// kustomize CLI (v5.8.1, `make kustomize`) builds examples/kustomize with the function's
// annotation switched from `exec` to `container` (the image pushed to the test's registry),
// without --enable-exec. kustomize runs container functions with `docker run` (kyaml
// fn/runtime/container/container.go, getCommand: --rm -i, --network none, --user nobody,
// --security-opt=no-new-privileges); `docker` is podman here, with the private configuration.
// The output must be the exec build's, examples/kustomize/expected.yaml, byte for byte.
func TestKustomizeContainerFunction(t *testing.T) {
	out := imageOut(t)
	addr := imagetest.StartRegistry(t)
	podman := need(t, "podman", imagetest.AptPodman)
	kustomize := filepath.Join(testcluster.CacheDir(), "bin", "kustomize-v5.8.1")
	if _, err := os.Stat(kustomize); err != nil {
		t.Fatalf("the kustomize CLI is not built (%v): run `make kustomize`", err)
	}
	_, _, idx := layoutIndex(t, filepath.Join(out, "sparkui-fn.oci.tar"), "sparkui-fn")
	tag, err := name.NewTag(addr+"/sparkui/sparkui-fn:"+version, name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatalf("push %s: %v", tag, err)
	}
	dir := filepath.Join(t.TempDir(), "overlay")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "kustomize"))); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "sparkui.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const execForm = "      exec:\n        path: ../../bin/sparkui-fn\n"
	if !strings.Contains(string(b), execForm) {
		t.Fatalf("examples/kustomize/sparkui.yaml no longer has\n%s", execForm)
	}
	b = []byte(strings.Replace(string(b), execForm, "      container:\n        image: "+tag.String()+"\n", 1))
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	docker := t.TempDir()
	if err := os.Symlink(podman, filepath.Join(docker, "docker")); err != nil {
		t.Fatal(err)
	}
	env := append(imagetest.PodmanEnv(t, addr), "PATH="+docker+string(os.PathListSeparator)+os.Getenv("PATH"))
	got := runIn(t, env, kustomize, "build", "--enable-alpha-plugins", dir)
	want, err := os.ReadFile(filepath.Join(root, "examples", "kustomize", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("kustomize build with the container function differs from examples/kustomize/expected.yaml:\n%s", got)
	}
}
