// Command image-tar writes sparkui's images as OCI layout tarballs without a container
// engine: `image-tar -name sparkui-runtime -version 0.1.0 -out bin/… linux/amd64=bin/linux-amd64/sparkui-runtime …`.
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
	ref := flag.String("ref", "", "image reference recorded in the layout index")
	version := flag.String("version", "", "image version label")
	source := flag.String("source", "https://github.com/sparkui/sparkui", "source label")
	out := flag.String("out", "", "tar file to write")
	flag.Parse()
	if *name == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: image-tar -name N -ref R -version V -out FILE os/arch=BINARY...")
		os.Exit(2)
	}
	var imgs []v1.Image
	for _, arg := range flag.Args() {
		plat, path, ok := strings.Cut(arg, "=")
		p, err := v1.ParsePlatform(plat)
		if !ok || err != nil {
			fmt.Fprintf(os.Stderr, "image-tar: %q is not os/arch=binary\n", arg)
			os.Exit(2)
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "image-tar:", err)
			os.Exit(1)
		}
		img, err := ociimage.Build(ociimage.Spec{Name: *name, Binary: bin, Platform: *p, Version: *version, Source: *source, Title: *name})
		if err != nil {
			fmt.Fprintln(os.Stderr, "image-tar:", err)
			os.Exit(1)
		}
		imgs = append(imgs, img)
	}
	if err := ociimage.WriteLayoutTar(*out, *ref, imgs...); err != nil {
		fmt.Fprintln(os.Stderr, "image-tar:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}
