package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/ociimage"
)

// docBlock is the fenced block that follows the marker `<!-- tested: name` in
// docs/deploy-argocd.md.
func docBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy-argocd.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- tested: "+name+" ")
	if !ok {
		t.Fatalf("docs/deploy-argocd.md has no block marked %q", name)
	}
	_, after, _ = strings.Cut(after, "```")
	_, body, _ := strings.Cut(after, "\n")
	body, _, ok = strings.Cut(body, "```")
	if !ok {
		t.Fatalf("docs/deploy-argocd.md: the %q block is not closed", name)
	}
	return body
}

// TestDocPluginYAML: the plugin.yaml the page shows is the one the image holds.
func TestDocPluginYAML(t *testing.T) {
	want, err := os.ReadFile("plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := docBlock(t, "plugin.yaml"); got != string(want) {
		t.Errorf("docs/deploy-argocd.md shows another plugin.yaml than cmp/plugin.yaml:\n%s", got)
	}
}

// TestDocValues: the chart values run the image as Argo CD's docs require (entrypoint the
// cmp-server the chart copies into var-files, user 999, the plugins socket directory, a /tmp
// of its own) and name the image `make cmp-image-tar` builds.
func TestDocValues(t *testing.T) {
	// Strictly as Kubernetes types: a misspelt field of the container fails here.
	var v struct {
		RepoServer struct {
			ExtraContainers []corev1.Container `json:"extraContainers"`
			Volumes         []corev1.Volume    `json:"volumes"`
		} `json:"repoServer"`
	}
	if err := yaml.UnmarshalStrict([]byte(docBlock(t, "values")), &v); err != nil {
		t.Fatal(err)
	}
	version, err := os.ReadFile(filepath.Join("..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.RepoServer.ExtraContainers) != 1 {
		t.Fatalf("extraContainers: %+v", v.RepoServer.ExtraContainers)
	}
	c := v.RepoServer.ExtraContainers[0]
	if sc := c.SecurityContext; c.Image != "ghcr.io/sparkui/sparkui-argocd-cmp:"+strings.TrimSpace(string(version)) ||
		fmt.Sprint(c.Command) != "["+ociimage.CMPEntrypoint+"]" || sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 999 {
		t.Errorf("the sidecar: %+v", c)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	want := map[string]string{"/var/run/argocd": "var-files", "/home/argocd/cmp-server/plugins": "plugins", "/tmp": "sparkui-cmp-tmp"}
	if fmt.Sprint(mounts) != fmt.Sprint(want) {
		t.Errorf("volumeMounts %v, want %v", mounts, want)
	}
	if len(v.RepoServer.Volumes) != 1 || v.RepoServer.Volumes[0].Name != "sparkui-cmp-tmp" || v.RepoServer.Volumes[0].VolumeSource.EmptyDir == nil {
		t.Errorf("volumes %+v, want the sidecar's /tmp emptyDir", v.RepoServer.Volumes)
	}
}

// TestDocApplication: the Application names the plugin by the name it has.
func TestDocApplication(t *testing.T) {
	var app struct {
		Kind string `json:"kind"`
		Spec struct {
			Source struct {
				Path   string `json:"path"`
				Plugin struct {
					Name string `json:"name"`
					Env  []struct{ Name, Value string }
				} `json:"plugin"`
			} `json:"source"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(docBlock(t, "application")), &app); err != nil {
		t.Fatal(err)
	}
	if app.Kind != "Application" || app.Spec.Source.Plugin.Name != plugin(t).Name() ||
		len(app.Spec.Source.Plugin.Env) != 1 || app.Spec.Source.Plugin.Env[0].Name != "SPARKUI_CONFIG" {
		t.Errorf("the Application: %+v", app)
	}
}

// TestDocLocalGenerate runs the page's local block and gets the golden.
func TestDocLocalGenerate(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-e", "-c", docBlock(t, "local"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the local block: %v\n%s", err, stderr.String())
	}
	want, err := os.ReadFile(filepath.Join("testdata", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// expected.yaml is the objects joined by "---"; the command prints the same stream.
	if got := strings.TrimSuffix(string(out), "\n"); got != strings.TrimSuffix(string(want), "\n") {
		t.Errorf("the local block printed\n%s\nwant cmp/testdata/expected.yaml", out)
	}
}
