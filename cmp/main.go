// Command sparkui-cmp is the generate step of sparkui's Argo CD Config Management Plugin
// (cmp/plugin.yaml, docs/deploy-argocd.md). argocd-cmp-server runs it in the Application's
// directory of the repository; it builds the directory as Argo CD would without the plugin —
// the kustomization when there is one (kustomize's own API, the version sparkui's go.mod pins,
// no plugins, files only from inside the directory tree), else the directory's YAML and JSON
// files — and pipes the result through sparkui-fn with the functionConfig, printing the
// manifests on stdout. The images have no shell, so this replaces the usual `sh -c` pipeline.
//
//	sparkui-cmp generate
//
// The functionConfig is the file named by ARGOCD_ENV_SPARKUI_CONFIG (an Application's
// spec.source.plugin.env SPARKUI_CONFIG; Argo CD adds the ARGOCD_ENV_ prefix), default
// sparkui.yaml; it is left out of the manifests. sparkui-fn is found on PATH. Exit status: 0,
// 1 with the reason on stderr (sparkui-fn's error results included: Argo CD then shows the
// generation failed, with that stderr, and applies nothing), 2 for bad usage.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

const defaultConfig = "sparkui.yaml"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "generate" {
		fmt.Fprintln(stderr, "usage: sparkui-cmp generate   (in the Application's directory; docs/deploy-argocd.md)")
		return 2
	}
	config := os.Getenv("ARGOCD_ENV_SPARKUI_CONFIG")
	if config == "" {
		config = defaultConfig
	}
	// SPARKUI_CONFIG comes from the Application (spec.source.plugin.env), which its owner
	// writes: a claim of that tenant. The sidecar may hold other applications' checkouts, so
	// only a file inside this Application's directory may be read as its functionConfig.
	if !filepath.IsLocal(config) {
		fmt.Fprintf(stderr, "sparkui-cmp: ARGOCD_ENV_SPARKUI_CONFIG %q: must be a relative path inside the Application's directory\n", config)
		return 1
	}
	in, err := build(".", config)
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-cmp:", err)
		return 1
	}
	fnArgs := []string{config, "-"}
	if _, err := os.Stat(config); errors.Is(err, os.ErrNotExist) && os.Getenv("ARGOCD_ENV_SPARKUI_CONFIG") == "" {
		fnArgs = nil // no sparkui.yaml: every default (sparkui-fn < manifests)
	} else if err != nil {
		fmt.Fprintf(stderr, "sparkui-cmp: the functionConfig %s (ARGOCD_ENV_SPARKUI_CONFIG): %v\n", config, err)
		return 1
	}
	fn := exec.Command("sparkui-fn", fnArgs...)
	fn.Stdin, fn.Stdout, fn.Stderr = bytes.NewReader(in), stdout, stderr
	if err := fn.Run(); err != nil {
		fmt.Fprintln(stderr, "sparkui-cmp: sparkui-fn:", err)
		return 1
	}
	return 0
}

// build renders dir: its kustomization, or its YAML/JSON files but config.
func build(dir, config string) ([]byte, error) {
	fs := filesys.MakeFsOnDisk()
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if fs.Exists(filepath.Join(dir, name)) {
			return kustomize(fs, dir, name, config)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml" || ext == ".json") && e.Name() != filepath.Base(config) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no kustomization and no YAML or JSON file besides %s in the Application's directory", config)
	}
	var out bytes.Buffer
	w := kio.ByteWriter{Writer: &out}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if err := w.Write(nodes); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out.WriteString("---\n")
	}
	return out.Bytes(), nil
}

// kustomize is `kustomize build dir` with the defaults: load restrictions on, no plugins. A
// kustomization that lists the functionConfig as a transformer (the exec-function layout of
// examples/kustomize) fails here with that said: under the plugin, sparkui-cmp runs the
// function, and the exec path of the repository would not exist in the sidecar.
func kustomize(fs filesys.FileSystem, dir, file, config string) ([]byte, error) {
	b, err := fs.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	var k types.Kustomization
	if err := k.Unmarshal(b); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, tr := range k.Transformers {
		if filepath.Clean(tr) == filepath.Clean(config) {
			return nil, fmt.Errorf("%s lists %s under transformers: with the Argo CD plugin, sparkui-cmp runs sparkui-fn itself; remove it from transformers (docs/deploy-argocd.md)", file, config)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	return m.AsYaml()
}
