// Command cmp-image-tar writes sparkui's Argo CD plugin sidecar image (internal/ociimage
// BuildCMP) as a multi-platform OCI layout tarball, like image-tar: `make cmp-image-tar`.
//
//	cmp-image-tar -ref REF -version V [-revision R] -plugin cmp/plugin.yaml -out FILE os/arch=DIR...
//
// Each DIR holds that platform's sparkui-fn and sparkui-cmp.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/sparkui/sparkui/internal/ociimage"
)

func main() {
	ref := flag.String("ref", "", "image reference with a tag, recorded in the layout's index.json")
	version := flag.String("version", "", "org.opencontainers.image.version")
	revision := flag.String("revision", "", "org.opencontainers.image.revision (omitted when empty)")
	source := flag.String("source", "https://github.com/sparkui/sparkui", "org.opencontainers.image.source")
	plugin := flag.String("plugin", "", "the plugin's plugin.yaml")
	out := flag.String("out", "", "tar file to write")
	flag.Parse()
	if *ref == "" || *version == "" || *plugin == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: cmp-image-tar -ref REF -version V [-revision R] -plugin plugin.yaml -out FILE os/arch=DIR...")
		os.Exit(2)
	}
	labels := ociimage.Labels{Title: "sparkui-argocd-cmp", Version: *version, Source: *source, Revision: *revision}
	if err := run(*ref, *plugin, *out, labels, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "cmp-image-tar:", err)
		os.Exit(1)
	}
}

func run(ref, plugin, out string, labels ociimage.Labels, args []string) error {
	pluginYAML, err := os.ReadFile(plugin)
	if err != nil {
		return err
	}
	var imgs []v1.Image
	for _, arg := range args {
		plat, dir, ok := strings.Cut(arg, "=")
		p, err := v1.ParsePlatform(plat)
		if !ok || err != nil || dir == "" {
			return fmt.Errorf("%q is not os/arch=dir", arg)
		}
		fn, err := os.ReadFile(filepath.Join(dir, "sparkui-fn"))
		if err != nil {
			return err
		}
		cmp, err := os.ReadFile(filepath.Join(dir, "sparkui-cmp"))
		if err != nil {
			return err
		}
		img, err := ociimage.BuildCMP(ociimage.CMPSpec{Fn: fn, CMP: cmp, PluginYAML: pluginYAML, Platform: *p, Labels: labels})
		if err != nil {
			return err
		}
		imgs = append(imgs, img)
	}
	idx, err := ociimage.Index(labels, imgs...)
	if err != nil {
		return err
	}
	if err := ociimage.WriteLayoutTar(out, ref, idx); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Println(out, d)
	return nil
}
