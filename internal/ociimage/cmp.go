package ociimage

import (
	"archive/tar"
	"bytes"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The Argo CD plugin sidecar image (docs/deploy-argocd.md). argocd-cmp-server, which the
// argo-cd chart copies into the shared /var/run/argocd volume, is its entrypoint; it reads the
// plugin's configuration from CMPPluginPath and runs spec.generate (`sparkui-cmp generate`),
// resolved through the image's PATH. Argo CD's docs (operator-manual/config-management-plugins.md,
// "Register the plugin sidecar") require the sidecar to run as user 999, which is the image's
// user too, so it runs without the chart's securityContext as well.
const (
	CMPPluginPath = "home/argocd/cmp-server/config/plugin.yaml"
	CMPBinDir     = "usr/local/bin"
	CMPEntrypoint = "/var/run/argocd/argocd-cmp-server"
	CMPUser       = "999:999"
)

// CMPSpec is the plugin sidecar image for one platform: the two binaries for that platform
// and cmp/plugin.yaml.
type CMPSpec struct {
	Fn, CMP, PluginYAML []byte
	Platform            v1.Platform
	Labels              Labels
}

// BuildCMP makes the plugin sidecar image for one platform, reproducibly like Build.
func BuildCMP(s CMPSpec) (v1.Image, error) {
	type entry struct {
		name string
		mode int64
		data []byte
	}
	dir := func(name string) entry { return entry{name: name, mode: 0o755} }
	entries := []entry{
		dir("etc/"),
		{"etc/group", 0o644, group},
		{"etc/passwd", 0o644, passwd},
		dir("home/"), dir("home/argocd/"), dir("home/argocd/cmp-server/"), dir("home/argocd/cmp-server/config/"),
		{CMPPluginPath, 0o644, s.PluginYAML},
		dir("usr/"), dir("usr/local/"), dir(CMPBinDir + "/"),
		{CMPBinDir + "/sparkui-cmp", 0o755, s.CMP},
		{CMPBinDir + "/sparkui-fn", 0o755, s.Fn},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), Typeflag: tar.TypeReg,
			ModTime: epoch, Uname: "root", Gname: "root"}
		if e.data == nil {
			hdr.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
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
	cf.OS, cf.Architecture, cf.Variant = s.Platform.OS, s.Platform.Architecture, s.Platform.Variant
	cf.Created = v1.Time{Time: epoch}
	cf.Config.User = CMPUser
	cf.Config.Entrypoint = []string{CMPEntrypoint}
	cf.Config.Env = []string{"PATH=/" + CMPBinDir}
	cf.Config.WorkingDir = "/home/argocd"
	cf.Config.Labels = s.Labels.Map()
	return mutate.ConfigFile(img, cf)
}
