package ociimage

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
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
	return build([]file{
		dir("etc/"),
		{"etc/group", 0o644, group},
		{"etc/passwd", 0o644, passwd},
		dir("home/"), dir("home/argocd/"), dir("home/argocd/cmp-server/"), dir("home/argocd/cmp-server/config/"),
		{CMPPluginPath, 0o644, s.PluginYAML},
		dir("usr/"), dir("usr/local/"), dir(CMPBinDir + "/"),
		{CMPBinDir + "/sparkui-cmp", 0o755, s.CMP},
		{CMPBinDir + "/sparkui-fn", 0o755, s.Fn},
	}, s.Platform, s.Labels, func(c *v1.Config) {
		c.User = CMPUser
		c.Entrypoint = []string{CMPEntrypoint}
		c.Env = []string{"PATH=/" + CMPBinDir}
		c.WorkingDir = "/home/argocd"
	})
}
