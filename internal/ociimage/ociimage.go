// Package ociimage builds sparkui's images without a container engine, the way ko does: the
// static binary and a minimal /etc/passwd and /etc/group as the only layer on an empty base, a
// numeric non-root user, the binary as entrypoint, OCI labels. The platforms of one image are
// one image index (a manifest list), written as an OCI image layout whose index.json names that
// index, packed in a tar: what `docker buildx build --output type=oci` and containerd's own
// exporter write, and what `ctr images import`, `skopeo copy oci-archive:` and `crane push`
// read.
package ociimage

import (
	"archive/tar"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the numeric non-root user and group every sparkui image runs as.
const User = "65532:65532"

// Annotation keys on the descriptor of index.json that name the image. OCI's image-layout
// ref.name holds the tag only; containerd's io.containerd.image.name holds the full reference.
// containerd 1.6 names imported images from io.containerd.image.name first and falls back to
// ref.name (containerd v1.6.20 import.go, imageName), and its own exporter writes both in this
// form (images/archive/exporter.go with reference.go's ociReferenceName), as buildx's OCI
// exporter does.
const (
	AnnotationRefName        = "org.opencontainers.image.ref.name"
	AnnotationContainerdName = "io.containerd.image.name"
)

// The accounts of /etc/passwd and /etc/group in every image. kpt runs a function image as
// `--user nobody` unless told otherwise (kpt internal/fnruntime/container.go, getCmd), which
// docker and podman resolve through the image's /etc/passwd: without one, `kpt fn eval --image`
// fails before the function starts. 65532 is User, named for tools that show names.
var (
	//go:embed rootfs/etc/passwd
	passwd []byte
	//go:embed rootfs/etc/group
	group []byte
)

// Spec describes one image for one platform.
type Spec struct {
	Name     string // binary name; the file is /<Name> and the entrypoint
	Binary   []byte
	Platform v1.Platform
	Labels   Labels
}

// Labels are the OCI annotations the image config carries as labels and the image index as
// annotations (OCI image-spec annotations.md, "Pre-Defined Annotation Keys").
type Labels struct {
	Title    string
	Version  string
	Source   string // repository URL
	Revision string // source revision (commit) the binaries were built from; omitted when empty
}

// Map is the labels as OCI annotation keys.
func (l Labels) Map() map[string]string {
	m := map[string]string{
		"org.opencontainers.image.title":    l.Title,
		"org.opencontainers.image.version":  l.Version,
		"org.opencontainers.image.source":   l.Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if l.Revision != "" {
		m["org.opencontainers.image.revision"] = l.Revision
	}
	return m
}

// epoch keeps images reproducible: the same binary gives the same digest.
var epoch = time.Unix(0, 0).UTC()

// Build makes the image for one platform.
func Build(s Spec) (v1.Image, error) {
	return build([]file{
		dir("etc/"),
		{"etc/group", 0o644, group},
		{"etc/passwd", 0o644, passwd},
		{s.Name, 0o755, s.Binary},
	}, s.Platform, s.Labels, func(c *v1.Config) {
		c.User = User
		c.Entrypoint = []string{"/" + s.Name}
		c.WorkingDir = "/"
	})
}

// file is one entry of an image's one layer; a nil data is a directory.
type file struct {
	name string
	mode int64
	data []byte
}

func dir(name string) file { return file{name: name, mode: 0o755} }

// build is every image of this package: one layer of files, owned by root and dated epoch, and
// a config for the platform with the labels, which config completes (user, entrypoint, …).
func build(files []file, p v1.Platform, labels Labels, config func(*v1.Config)) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg,
			ModTime: epoch, Uname: "root", Gname: "root"}
		if f.data == nil {
			hdr.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
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
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: epoch}
	config(&cf.Config)
	cf.Config.Labels = labels.Map()
	return mutate.ConfigFile(img, cf)
}

// Index makes the multi-platform image: an OCI image index holding imgs, each descriptor with
// its platform (read from the image's config), annotated with labels. Two images for one
// platform are an error: a client picks by platform and would get either.
func Index(labels Labels, imgs ...v1.Image) (v1.ImageIndex, error) {
	if len(imgs) == 0 {
		return nil, fmt.Errorf("an image index needs at least one image")
	}
	seen := map[string]bool{}
	adds := make([]mutate.IndexAddendum, 0, len(imgs))
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		p := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
		if seen[p.String()] {
			return nil, fmt.Errorf("two images for platform %s", p.String())
		}
		seen[p.String()] = true
		mt, err := img.MediaType()
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: plainImage{img}, Descriptor: v1.Descriptor{MediaType: mt, Platform: &p}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return mutate.Annotations(idx, labels.Map()).(v1.ImageIndex), nil
}

// plainImage is an image whose index descriptor carries no artifactType. go-containerregistry
// sets a descriptor's artifactType to the config's media type unless the image says otherwise
// (partial.Descriptor), but OCI meant that field for artifacts, buildx and containerd write none
// for images, and containers/image 5.23 (skopeo 1.9, Debian 12) drops it when it reads an index:
// `skopeo copy --all` must then rewrite the index, which changes its digest, and
// --preserve-digests refuses ("Manifest list must be converted ... but we cannot modify it").
type plainImage struct{ v1.Image }

func (plainImage) ArtifactType() (string, error) { return "", nil }

// RefAnnotations are the annotations of index.json's descriptor for the image named ref, which
// must carry a tag.
func RefAnnotations(ref string) (map[string]string, error) {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w (a full reference with a tag, e.g. ghcr.io/sparkui/sparkui-fn:0.1.0)", ref, err)
	}
	return map[string]string{AnnotationRefName: tag.TagStr(), AnnotationContainerdName: tag.Name()}, nil
}

// WriteLayoutTar writes idx as an OCI image layout whose index.json holds one descriptor, the
// image index named ref, packed into the tar file at path.
func WriteLayoutTar(path, ref string, idx v1.ImageIndex) error {
	anns, err := RefAnnotations(ref)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(anns)); err != nil {
		return err
	}
	return tarDir(dir, path)
}

// tarDir packs dir in lexical order with fixed owners, modes and times, so that the same layout
// gives the same tar bytes whoever builds it.
func tarDir(dir, path string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, p := range paths {
		if err = addFile(tw, dir, p); err != nil {
			break
		}
	}
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

func addFile(tw *tar.Writer, dir, p string) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return err
	}
	info, err := os.Lstat(p)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch}
	switch {
	case info.IsDir():
		hdr.Typeflag, hdr.Mode, hdr.Name = tar.TypeDir, 0o755, hdr.Name+"/"
		return tw.WriteHeader(hdr)
	case info.Mode().IsRegular():
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, info.Size()
	default:
		return fmt.Errorf("%s: not a regular file", p)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	src, err := os.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = io.Copy(tw, src)
	return err
}
