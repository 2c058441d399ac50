// Package ociimage builds sparkui's images without a container engine, the way ko does: the
// static binary as the only layer on an empty base, a numeric non-root user, the binary as
// entrypoint, OCI labels; written as an OCI image layout (one index, one manifest per
// platform) packed in a tar.
package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the numeric non-root user and group every sparkui image runs as.
const User = "65532:65532"

// Spec describes one image.
type Spec struct {
	Name     string // binary name; the file is /<Name> and the entrypoint
	Binary   []byte
	Platform v1.Platform
	Version  string
	Source   string // repository URL for org.opencontainers.image.source
	Title    string
}

// epoch keeps images reproducible: the same binary gives the same digest.
var epoch = time.Unix(0, 0).UTC()

// Build makes the image for one platform.
func Build(s Spec) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{
		Name: s.Name, Mode: 0o755, Size: int64(len(s.Binary)), Typeflag: tar.TypeReg,
		ModTime: epoch, Uname: "root", Gname: "root",
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(s.Binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = s.Platform.OS, s.Platform.Architecture, s.Platform.Variant
	cf.Created = v1.Time{Time: epoch}
	cf.Config.User = s.User()
	cf.Config.Entrypoint = []string{"/" + s.Name}
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    s.Title,
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.source":   s.Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	return mutate.ConfigFile(img, cf)
}

// User is the image's user (a method so tests read it from one place).
func (Spec) User() string { return User }

// WriteLayoutTar writes images (one per platform) as an OCI image layout whose index names
// ref, packed into the tar file at path.
func WriteLayoutTar(path, ref string, imgs ...v1.Image) error {
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		if err := p.AppendImage(img,
			layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}),
			layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
			return err
		}
	}
	return tarDir(dir, path)
}

func tarDir(dir, path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, hdr.ModTime = filepath.ToSlash(rel), epoch
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}
