package catalog_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/catalog"
	"github.com/sparkui/sparkui/internal/version"
)

var update = flag.Bool("update", false, "rewrite each example's .expected/diff.patch or results.yaml")

var root, fnBin string

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if root, err = filepath.Abs(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	if fnBin != "" {
		os.RemoveAll(filepath.Dir(fnBin))
	}
	os.Exit(code)
}

// metadata is catalog/sparkui-fn/metadata.yaml: the fields the kpt function catalog reads
// (kptdev/krm-functions-catalog scripts/generate_catalog/generate_catalog.go, type metadata)
// and the ones every entry of it carries (functions/go/*/metadata.yaml: emails, license).
// Unknown fields are refused.
type metadata struct {
	Image              string   `json:"image"`
	Description        string   `json:"description"`
	Tags               []string `json:"tags"`
	SourceURL          string   `json:"sourceURL"`
	ExamplePackageURLs []string `json:"examplePackageURLs"`
	Emails             []string `json:"emails"`
	License            string   `json:"license"`
	Types              []string `json:"types"`
	Keywords           []string `json:"keywords"`
	Hidden             bool     `json:"hidden,omitempty"`
}

const repoURL = "https://github.com/sparkui/sparkui/tree/main/"

func readMetadata(t *testing.T) metadata {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "catalog", "sparkui-fn", "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m metadata
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("catalog/sparkui-fn/metadata.yaml: %v", err)
	}
	return m
}

// TestCatalogMetadata: metadata.yaml names the image `make image-tar` publishes, tags and
// types are the catalog's two (mutator, validator), its URLs point at this repository's
// source and at exactly the example packages under catalog/examples, each of which runs the
// image of this version; the README has the catalog's sections in order and lists every
// example.
func TestCatalogMetadata(t *testing.T) {
	m := readMetadata(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	repo := regexp.MustCompile(`(?m)^REPO \?= (\S+)$`).FindSubmatch(mk)
	if repo == nil {
		t.Fatal("Makefile has no REPO ?= line")
	}
	if want := string(repo[1]) + "/sparkui-fn"; m.Image != want {
		t.Errorf("image %q, want %q (the Makefile's REPO; the catalog names an image without its tag)", m.Image, want)
	}
	if strings.TrimSpace(m.Description) == "" || strings.HasSuffix(m.Description, "\n") {
		t.Errorf("description %q: one line wanted", m.Description)
	}
	want := []string{"mutator", "validator"}
	if !slices.Equal(m.Tags, want) || !slices.Equal(m.Types, want) {
		t.Errorf("tags %v, types %v: want %v for both (the function transforms, and validates with mode: validate)", m.Tags, m.Types, want)
	}
	if m.License != "Apache-2.0" {
		t.Errorf("license %q, want Apache-2.0 (the images' org.opencontainers.image.licenses)", m.License)
	}
	if len(m.Emails) == 0 || len(m.Keywords) == 0 {
		t.Errorf("emails %v, keywords %v: both wanted", m.Emails, m.Keywords)
	}
	if m.Hidden {
		t.Error("hidden: true would keep the function out of the catalog's listing")
	}
	src, ok := strings.CutPrefix(m.SourceURL, repoURL)
	if !ok {
		t.Errorf("sourceURL %q is not under %s", m.SourceURL, repoURL)
	} else if _, err := os.Stat(filepath.Join(root, src, "main.go")); err != nil {
		t.Errorf("sourceURL %q: %v", m.SourceURL, err)
	}

	dirs, err := filepath.Glob(filepath.Join(root, "catalog", "examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, u := range m.ExamplePackageURLs {
		p, ok := strings.CutPrefix(u, repoURL)
		if !ok || filepath.Dir(p) != "catalog/examples" {
			t.Errorf("examplePackageURLs: %q is not a package under %scatalog/examples", u, repoURL)
			continue
		}
		listed = append(listed, filepath.Join(root, p))
	}
	if !slices.Equal(listed, dirs) {
		t.Errorf("examplePackageURLs name %v, catalog/examples holds %v", listed, dirs)
	}
	readme, err := os.ReadFile(filepath.Join(root, "catalog", "sparkui-fn", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	wantImage := m.Image + ":" + version.Version
	for _, dir := range dirs {
		cfg, err := catalog.ReadConfig(dir)
		if err != nil {
			t.Error(err)
			continue
		}
		if cfg.Image != wantImage {
			t.Errorf("%s: image %q, want %q (this version's)", dir, cfg.Image, wantImage)
		}
		for _, f := range []string{"README.md", "Kptfile", ".krmignore"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", dir, err)
			}
		}
		if ex, _ := os.ReadFile(filepath.Join(dir, "README.md")); !strings.Contains(string(ex), "--image "+wantImage) {
			t.Errorf("%s/README.md does not run %s", dir, wantImage)
		}
		if !strings.Contains(string(readme), "(../examples/"+filepath.Base(dir)+"/)") {
			t.Errorf("catalog/sparkui-fn/README.md does not list %s", filepath.Base(dir))
		}
	}
	// The catalog's section layout (functions/go/set-namespace/README.md).
	at := 0
	for _, h := range []string{"# sparkui-fn\n", "\n## Overview\n", "<!--mdtogo:Short-->", "\n## Usage\n", "\n### FunctionConfig\n", "\n## Examples\n"} {
		i := strings.Index(string(readme[at:]), h)
		if i < 0 {
			t.Errorf("catalog/sparkui-fn/README.md: %q missing or out of order", strings.TrimSpace(h))
			continue
		}
		at += i + len(h)
	}
	if n := strings.Count(string(readme), wantImage); n < 3 {
		t.Errorf("catalog/sparkui-fn/README.md names %s %d times; its usage should run this version", wantImage, n)
	}
}

// buildFn builds the function once, as `make build` does, into a directory of the test's.
func buildFn(t *testing.T) string {
	t.Helper()
	if fnBin != "" {
		return fnBin
	}
	dir, err := os.MkdirTemp("", "sparkui-catalog-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sparkui-fn")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/sparkui/sparkui/internal/version.Version="+version.Version, "-o", bin, "./fn")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("building sparkui-fn: %v\n%s", err, out)
	}
	fnBin = bin
	return bin
}

// TestCatalogExamples runs every catalog example with the real kpt and the built binary as
// an exec function, twice each, and compares the package's diff (or, for a failing run, kpt's
// results) with .expected; -update rewrites those files.
func TestCatalogExamples(t *testing.T) {
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Fatalf("kpt not found on $PATH (%v): apt-get install -y google-cloud-cli-kpt", err)
	}
	bin := buildFn(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "catalog", "examples", "*"))
	if len(dirs) < 2 {
		t.Fatalf("catalog/examples holds %d examples", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			o, err := catalog.Run(dir, kpt, []string{"--exec", bin}, nil)
			if err != nil {
				t.Fatal(err)
			}
			Check(t, dir, o, *update)
		})
	}
}

// Check compares o with dir's .expected (or rewrites it): exit code, then diff.patch for a
// run that passed, results.yaml for one that failed.
func Check(t *testing.T, dir string, o catalog.Outcome, update bool) {
	t.Helper()
	cfg, err := catalog.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o.ExitCode != cfg.ExitCode {
		t.Fatalf("kpt exited %d, want %d:\n%s", o.ExitCode, cfg.ExitCode, o.Output)
	}
	file, got := "diff.patch", o.Diff
	if o.ExitCode != 0 {
		file, got = "results.yaml", o.Results
	}
	if got == "" {
		t.Fatalf("the run left no %s: an example must show what the function does:\n%s", file, o.Output)
	}
	path := filepath.Join(dir, ".expected", file)
	if update {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./catalog -run TestCatalogExamples -update writes it)", err)
	}
	if strings.TrimSpace(string(want)) != got {
		t.Errorf("%s differs (-update rewrites it); got:\n%s", path, got)
	}
}
