// Package docstest checks that the docs state what the repository pins and tests: versions in
// compatibility.md, every error rule in troubleshooting.md. It has only tests.
package docstest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/testkit/gatewaytest"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pinned is the first submatch of re in the file at path.
func pinned(t *testing.T, path, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(read(t, path))
	if m == nil {
		t.Fatalf("%s: no match for %s", path, re)
	}
	return m[1]
}

// row is the compatibility.md table row whose first cell is name.
func row(t *testing.T, doc, name string) string {
	t.Helper()
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "| "+name+" |") {
			return l
		}
	}
	t.Fatalf("compatibility.md has no row %q", name)
	return ""
}

// TestCompatibilityVersions: every tested version in compatibility.md is the one the
// repository pins, read from where it is pinned, or the tool's own answer on this machine.
func TestCompatibilityVersions(t *testing.T) {
	doc := read(t, "docs/compatibility.md")
	tool := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v (make test needs it on PATH)", name, strings.Join(args, " "), err)
		}
		return string(bytes.TrimSpace(out))
	}
	kubectl := regexp.MustCompile(`Client Version: v(\d+\.\d+\.\d+)`).FindStringSubmatch(tool("kubectl", "version", "--client"))
	if kubectl == nil {
		t.Fatal("kubectl version --client: no Client Version")
	}
	for _, c := range []struct{ row, version string }{
		{"kube-apiserver, kube-controller-manager", pinned(t, "testkit/testcluster/build.sh", `(?m)^K8S_VERSION=(\S+)`)},
		{"etcd", pinned(t, "testkit/testcluster/build.sh", `(?m)^ETCD_VERSION=(\S+)`)},
		{"kubeflow spark-operator CRDs", pinned(t, "testdata/assets/crds/SOURCE", `kubeflow/spark-operator, charts/spark-operator-chart/crds/, commit (\w+)`)},
		{"kubeflow spark-operator CRDs", "chart " + pinned(t, "testdata/assets/crds-kubeflow-chart-1.3.1/SOURCE", `chart (?:v)?(\d+\.\d+\.\d+)`)},
		{"Apache Spark Kubernetes Operator CRDs", pinned(t, "testdata/assets/crds/SOURCE", `spark-kubernetes-operator/crds/,\s+commit (\w+)`)},
		{"Gateway API CRDs", pinned(t, "go.mod", `sigs.k8s.io/gateway-api (v\S+)`)},
		{"Gateway API with Traefik", "Gateway API " + gatewaytest.GatewayAPIVersion},
		{"Gateway API with Traefik", "Traefik " + pinned(t, "testkit/gatewaytest/build-traefik.sh", `(?m)^TRAEFIK_VERSION=(\S+)`)},
		{"OpenShift Route", pinned(t, "testdata/assets/crds-openshift/SOURCE", `commit (\w+)`)},
		{"kustomize", pinned(t, "Makefile", `(?m)^KUSTOMIZE_VERSION := (\S+)`)},
		{"Helm", pinned(t, "testkit/helmtest/build-helm.sh", `(?m)^HELM_VERSION=(\S+)`)},
		{"kpt", tool("kpt", "version")},
		{"kubectl (client-side and server-side apply)", "v" + kubectl[1]},
		{"Argo CD's engine", pinned(t, "testkit/argocdengine/go.mod", `github.com/argoproj/argo-cd/gitops-engine (v\S+)`)},
		{"Flux CLI", pinned(t, "testkit/fluxtest/build-flux.sh", `(?m)^FLUX_VERSION=(\S+)`)},
		{"Flux kustomize-controller's apply", "`github.com/fluxcd/pkg/ssa` " + pinned(t, "go.mod", `github.com/fluxcd/pkg/ssa (v\S+)`)},
		{"Go", strings.Join(strings.Split(pinned(t, "go.mod", `(?m)^go (\S+)`), ".")[:2], ".")},
		{"containerd, runc", "containerd " + version(t, tool("containerd", "--version"), `containerd \S+ (\d+\.\d+\.\d+)`)},
		{"containerd, runc", "runc " + version(t, tool("runc", "--version"), `runc version (\d+\.\d+\.\d+)`)},
		{"distribution registry", pinned(t, "testkit/registry/build-registry.sh", `(?m)^REGISTRY_VERSION=(\S+)`)},
		{"crane, skopeo", "crane " + pinned(t, "Makefile", `(?m)^CRANE_VERSION := (\S+)`)},
		{"crane, skopeo", "skopeo " + version(t, tool("skopeo", "--version"), `skopeo version (\d+\.\d+\.\d+)`)},
		{"podman (kpt's container runtime)", version(t, tool("podman", "--version"), `podman version (\d+\.\d+\.\d+)`)},
	} {
		r := row(t, doc[strings.Index(doc, "## Tested versions"):], c.row)
		if !regexp.MustCompile(`(^|[\s|(])` + regexp.QuoteMeta(c.version) + `([\s|),;]|$)`).MatchString(r) {
			t.Errorf("compatibility.md row %q does not say %s (pinned by the repository):\n%s", c.row, c.version, r)
		}
	}
	for _, untested := range []string{"Argo CD (a running repo server, cmp-server, application controller)", "Flux (a running kustomize-controller)", "OpenShift cluster"} {
		if r := row(t, doc, untested); !strings.Contains(r, "not tested") {
			t.Errorf("compatibility.md row %q must say what is not tested:\n%s", untested, r)
		}
	}
}

// version is the first submatch of re in a tool's --version output.
func version(t *testing.T, out, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no version matching %s in %q", re, out)
	}
	return m[1]
}

// TestDocLinks: every relative link of the README and docs/ names a file that exists, and a
// link to a section of a page names a heading (or an explicit anchor) of that page.
func TestDocLinks(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]*)\)`)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := p
			if file != "" {
				path = filepath.Join(filepath.Dir(p), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links %s, which does not exist", p, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !hasAnchor(t, path, frag) {
				t.Errorf("%s links %s: no such heading in %s", p, target, path)
			}
		}
	}
}

// hasAnchor: page has a heading whose GitHub anchor is frag, or an <a id="frag">.
func hasAnchor(t *testing.T, page, frag string) bool {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `<a id="`+frag+`">`) {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " ")
		if !strings.HasPrefix(l, "#") || !ok {
			continue
		}
		if githubAnchor(h) == frag {
			return true
		}
	}
	return false
}

// githubAnchor is the id GitHub gives a heading: lower case, spaces as dashes, punctuation
// other than dashes and underscores dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127 && r != '—' && r != '–' && r != '→' && r != '…' && r != '×':
			b.WriteRune(r)
		}
	}
	return b.String()
}
