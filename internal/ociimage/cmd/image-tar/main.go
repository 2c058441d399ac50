// Command image-tar writes one of sparkui's images as an OCI layout tarball without a container
// engine: one multi-platform image (an image index holding one manifest per platform) named by
// -ref.
//
//	image-tar -name sparkui-runtime -ref ghcr.io/sparkui/sparkui-runtime:0.1.0 -version 0.1.0 \
//	  -out bin/sparkui-runtime.oci.tar linux/amd64=bin/linux-amd64/sparkui-runtime ...
//
// It prints the tarball's path and the image index's digest (what `name@sha256:…` pins).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/sparkui/sparkui/internal/ociimage"
)

func main() {
	name := flag.String("name", "", "binary name (entrypoint /<name>)")
	ref := flag.String("ref", "", "image reference with a tag, recorded in the layout's index.json")
	version := flag.String("version", "", "org.opencontainers.image.version")
	revision := flag.String("revision", "", "org.opencontainers.image.revision (the source commit; omitted when empty)")
	source := flag.String("source", "https://github.com/sparkui/sparkui", "org.opencontainers.image.source")
	out := flag.String("out", "", "tar file to write")
	flag.Parse()
	if *name == "" || *ref == "" || *version == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: image-tar -name N -ref REPO:TAG -version V [-revision COMMIT] -out FILE os/arch=BINARY...")
		os.Exit(2)
	}
	if err := run(*name, *ref, *out, ociimage.Labels{Title: *name, Version: *version, Source: *source, Revision: *revision}, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "image-tar:", err)
		os.Exit(1)
	}
}

func run(name, ref, out string, labels ociimage.Labels, args []string) error {
	var imgs []v1.Image
	for _, arg := range args {
		plat, path, ok := strings.Cut(arg, "=")
		p, err := v1.ParsePlatform(plat)
		if !ok || err != nil || path == "" {
			return fmt.Errorf("%q is not os/arch=binary", arg)
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		img, err := ociimage.Build(ociimage.Spec{Name: name, Binary: bin, Platform: *p, Labels: labels})
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
