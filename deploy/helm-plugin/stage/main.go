// Command stage writes the plugin directory of one platform, which `helm plugin package` then
// packs (deploy/helm-plugin/package.sh): plugin.yaml with the version given and only that
// platform's platformCommand, and bin/sparkui-fn, that platform's build.
//
//	go run ./deploy/helm-plugin/stage -platform linux/amd64 -version 0.1.0 -binary BIN -out DIR deploy/helm-plugin/plugin.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {
	platform := flag.String("platform", "", "os/arch of the package, e.g. linux/amd64")
	version := flag.String("version", "", "the plugin's version (SemVer): the VERSION file's")
	binary := flag.String("binary", "", "the sparkui-fn built for the platform")
	out := flag.String("out", "", "the plugin directory to write (created; must not exist)")
	flag.Parse()
	if flag.NArg() != 1 || *platform == "" || *version == "" || *binary == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: stage -platform OS/ARCH -version V -binary BIN -out DIR plugin.yaml")
		os.Exit(2)
	}
	if err := stage(flag.Arg(0), *platform, *version, *binary, *out); err != nil {
		fmt.Fprintln(os.Stderr, "stage:", err)
		os.Exit(1)
	}
}

func stage(pluginYAML, platform, version, binary, out string) error {
	goos, arch, ok := strings.Cut(platform, "/")
	if !ok || goos == "" || arch == "" {
		return fmt.Errorf("platform %q is not os/arch", platform)
	}
	src, err := os.ReadFile(pluginYAML)
	if err != nil {
		return err
	}
	y, err := Rewrite(src, goos, arch, version)
	if err != nil {
		return fmt.Errorf("%s: %w", pluginYAML, err)
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists: a package holds only what this run writes", out)
	}
	if err := os.MkdirAll(filepath.Join(out, "bin"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "plugin.yaml"), y, 0o644); err != nil {
		return err
	}
	return copyFile(binary, filepath.Join(out, "bin", "sparkui-fn"))
}

// Rewrite is plugin.yaml for one platform: version set, the platformCommand entries of other
// platforms removed, the template's comments replaced by one line saying what the file is.
func Rewrite(src []byte, goos, arch, version string) ([]byte, error) {
	doc, err := yaml.Parse(string(src))
	if err != nil {
		return nil, err
	}
	if err := doc.PipeE(yaml.SetField("version", yaml.NewStringRNode(version))); err != nil {
		return nil, err
	}
	cmds, err := doc.Pipe(yaml.Lookup("runtimeConfig", "platformCommand"))
	if err != nil || cmds == nil {
		return nil, errors.New("no runtimeConfig.platformCommand")
	}
	var keep []*yaml.Node
	for _, c := range cmds.Content() {
		n := yaml.NewRNode(c)
		o, _ := n.GetString("os")
		a, _ := n.GetString("arch")
		if o == goos && a == arch {
			keep = append(keep, c)
		}
	}
	if len(keep) != 1 {
		return nil, fmt.Errorf("%d platformCommand entries for %s/%s, want 1", len(keep), goos, arch)
	}
	cmds.YNode().Content = keep
	s, err := doc.String()
	if err != nil {
		return nil, err
	}
	// The template's leading comments are about packaging, not about this file.
	lines := strings.SplitAfter(s, "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "#") || strings.TrimSpace(lines[0]) == "") {
		lines = lines[1:]
	}
	head := fmt.Sprintf("# The sparkui Helm post-renderer plugin %s for %s/%s, packaged by make helm-plugin\n"+
		"# from deploy/helm-plugin/plugin.yaml (docs/deploy-helm.md).\n", version, goos, arch)
	return []byte(head + strings.Join(lines, "")), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
