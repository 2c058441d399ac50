package examples_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// krustyBuild is `kustomize build --enable-alpha-plugins --enable-exec dir` in process: the
// library the kustomize CLI is (sigs.k8s.io/kustomize/api, the version kustomize v5.8.1
// links), configured as the CLI's build command configures it for those flags
// (kustomize/v5 commands/build/build.go NewCmdBuild and HonorKustomizeFlags: default
// options, reorder unspecified, plugins enabled with the statically linked builtins, exec
// functions on, the disk as file system). Exec functions still run as processes, in the
// kustomization's directory as with the CLI (api internal/target/kusttarget.go sets the
// plugin loader's working directory to the kustomization root); what it saves is the
// kustomize process. The CLI itself still builds every example once (kustomizeExample).
func krustyBuild(t testing.TB, dir string) []byte {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	out, err := krustyRun(dir)
	if err != nil {
		t.Fatalf("kustomize build (in process, krusty) %s: %v", dir, err)
	}
	return out
}

// krustyRun is krustyBuild returning the error.
func krustyRun(dir string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	opts.PluginConfig.HelmConfig.Command = "helm" // the CLI's --helm-command default; nothing here uses it
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

// BenchmarkKustomizeBuild compares one build of examples/kubeflow (sparkui-fn as an exec
// transformer) through the kustomize CLI and in process (krusty): the numbers behind
// docs/design-choices.md's "kustomize in tests".
//
//	go test -run '^$' -bench KustomizeBuild -count 6 ./examples
func BenchmarkKustomizeBuild(b *testing.B) {
	cli := kustomizeBin(b)
	b.Run("cli", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(cli, "build", "--enable-alpha-plugins", "--enable-exec", "examples/kubeflow")
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("kustomize build: %v\n%s", err, out)
			}
		}
	})
	b.Run("krusty", func(b *testing.B) {
		for b.Loop() {
			krustyBuild(b, "examples/kubeflow")
		}
	})
}
