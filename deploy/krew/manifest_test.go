// Package krew holds the krew manifest of `kubectl sparkui` and its packaging; the test checks
// the manifest's shape.
package krew

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// manifest is krew's plugin manifest as its documentation describes it
// (krew.sigs.k8s.io/docs/developer-guide/plugin-manifest: apiVersion
// krew.googlecontainertools.github.com/v1alpha2, kind Plugin, metadata.name = the file's
// name and the command's, spec.version a semantic version with its "v", platforms each with a
// selector, uri, sha256, bin and files). Unknown fields fail the strict decode below.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats,omitempty"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

// TestManifestShape: the manifest as package.sh renders it (version and sums filled in) is
// krew's shape, names the command kubectl-sparkui, and lists exactly the Helm plugin's
// platforms (deploy/helm-plugin/package.sh), each archive named for its platform.
func TestManifestShape(t *testing.T) {
	raw, err := os.ReadFile("sparkui.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(raw), "@VERSION@", "0.1.0")
	text = regexp.MustCompile(`@SHA256_[a-z0-9_]+@`).ReplaceAllString(text, strings.Repeat("ab", 32))
	if strings.Contains(text, "@") {
		t.Fatalf("a placeholder package.sh does not fill in is left:\n%s", text)
	}
	var m manifest
	if err := yaml.UnmarshalStrict([]byte(text), &m); err != nil {
		t.Fatalf("not krew's manifest shape: %v", err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" {
		t.Errorf("apiVersion/kind %s/%s", m.APIVersion, m.Kind)
	}
	if m.Metadata.Name != "sparkui" {
		t.Errorf("metadata.name %q: krew wants the file's name, and it is the command (kubectl sparkui)", m.Metadata.Name)
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(m.Spec.Version) {
		t.Errorf("spec.version %q: krew wants a semantic version with its v", m.Spec.Version)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Description == "" || m.Spec.Homepage == "" {
		t.Error("shortDescription, description and homepage are required")
	}
	helm, err := os.ReadFile("../helm-plugin/package.sh")
	if err != nil {
		t.Fatal(err)
	}
	pm := regexp.MustCompile(`PLATFORMS="\$\{PLATFORMS:-([^}]*)\}"`).FindSubmatch(helm)
	if pm == nil {
		t.Fatal("deploy/helm-plugin/package.sh's default PLATFORMS not found: update the test")
	}
	want := strings.Fields(string(pm[1]))
	var got []string
	for _, p := range m.Spec.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		got = append(got, os+"/"+arch)
		if !strings.HasSuffix(p.URI, "/kubectl-sparkui_"+os+"_"+arch+".tar.gz") || !strings.HasPrefix(p.URI, "https://") {
			t.Errorf("%s/%s: uri %s is not that platform's archive", os, arch, p.URI)
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p.SHA256) {
			t.Errorf("%s/%s: sha256 %q", os, arch, p.SHA256)
		}
		if p.Bin != "kubectl-sparkui" || len(p.Files) != 1 || p.Files[0].From != "kubectl-sparkui" || p.Files[0].To != "." {
			t.Errorf("%s/%s: bin %q files %+v: the archive holds kubectl-sparkui at its root", os, arch, p.Bin, p.Files)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("platforms %v, the Helm plugin's %v", got, want)
	}
}
