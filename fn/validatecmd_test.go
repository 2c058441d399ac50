package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// validateFixtures are the per-rule ResourceList fixtures of validate/testdata.
func validateFixtures(t testing.TB) []string {
	t.Helper()
	ins, err := filepath.Glob("../validate/testdata/*/input.yaml")
	if err != nil || len(ins) < 34 {
		t.Fatalf("want at least a fail and a pass fixture per rule, found %d (%v)", len(ins), err)
	}
	return ins
}

// expectations are the "RULE SEVERITY KIND FIELD" of a fixture's results.yaml, the results
// validate mode gives for its input.yaml (validate/fixtures_test.go holds it to that).
func expectations(t testing.TB, input string) []string {
	t.Helper()
	var results framework.Results
	if err := yaml.Unmarshal(mustRead(t, filepath.Join(filepath.Dir(input), "results.yaml")), &results); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range results {
		kind, field := "-", "-"
		if r.ResourceRef != nil {
			kind = r.ResourceRef.Kind
		}
		if r.Field != nil {
			field = r.Field.Path
		}
		out = append(out, strings.Join([]string{r.Tags["rule"], string(r.Severity), kind, field}, " "))
	}
	sort.Strings(out)
	return out
}

// plainInput turns a ResourceList fixture into what `sparkui-fn validate` reads: a
// multi-document YAML file of its items, and its functionConfig as a --config file.
func plainInput(t testing.TB, dir string, src []byte) (manifests, config string) {
	t.Helper()
	r := &kio.ByteReader{Reader: bytes.NewReader(src), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, it := range items {
		docs = append(docs, it.MustString())
	}
	manifests = filepath.Join(dir, "manifests.yaml")
	if err := os.WriteFile(manifests, []byte("# kustomize build output\n"+strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if r.FunctionConfig != nil {
		config = filepath.Join(dir, "fn-config.yaml")
		if err := os.WriteFile(config, []byte(r.FunctionConfig.MustString()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return manifests, config
}

func runCmd(t testing.TB, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"validate"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

type jsonOut struct {
	Results []struct {
		Rule        string `json:"rule"`
		Severity    string `json:"severity"`
		Message     string `json:"message"`
		ResourceRef *struct {
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"resourceRef"`
		Field *struct {
			Path string `json:"path"`
		} `json:"field"`
		File *struct {
			Path  string `json:"path"`
			Index int    `json:"index"`
			Line  int    `json:"line"`
		} `json:"file"`
	} `json:"results"`
	Summary struct {
		Errors, Warnings, Info, Objects, Files int
	} `json:"summary"`
}

// TestValidateCommandOnFixtures: `sparkui-fn validate FILE --output json` on every rule
// fixture, turned into plain YAML, finds exactly what the KRM function finds in validate mode
// (the fixture's expectations), places each finding on a line of the file that holds the
// field at fault, and exits 1 exactly when an error is found.
func TestValidateCommandOnFixtures(t *testing.T) {
	for _, in := range validateFixtures(t) {
		name := filepath.Base(filepath.Dir(in))
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want := expectations(t, in)
			manifests, config := plainInput(t, t.TempDir(), src)
			args := []string{manifests, "--output", "json"}
			if config != "" {
				args = append(args, "--config", config)
			}
			code, stdout, stderr := runCmd(t, "", args...)
			var out jsonOut
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("exit %d, output is not JSON: %v\n%s\nstderr: %s", code, err, stdout, stderr)
			}
			lines := strings.Split(string(mustRead(t, manifests)), "\n")
			var got []string
			hasError := false
			for _, r := range out.Results {
				field := "-"
				if r.Field != nil {
					field = r.Field.Path
				}
				got = append(got, strings.Join([]string{r.Rule, r.Severity, r.ResourceRef.Kind, field}, " "))
				hasError = hasError || r.Severity == "error"
				if r.File == nil || r.File.Path != manifests || r.File.Line < 1 || r.File.Line > len(lines) {
					t.Errorf("%s: no usable file/line: %+v", r.Rule, r.File)
					continue
				}
				if text := lines[r.File.Line-1]; !lineHolds(text, field) {
					t.Errorf("%s %s: line %d is %q", r.Rule, field, r.File.Line, text)
				}
			}
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("findings differ from the fixture's expectations (-want +got):\n%s", d)
			}
			if wantCode := map[bool]int{true: 1, false: 0}[hasError]; code != wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, wantCode, stderr)
			}
		})
	}
}

var keyInPath = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*|"[^"]+"`)

// lineHolds: the line of a finding shows one of the keys or list elements of its field path
// (the deepest that exists), or starts the object when the finding names no field.
func lineHolds(line, field string) bool {
	if field == "-" {
		return strings.HasPrefix(strings.TrimSpace(line), "apiVersion:")
	}
	if strings.Contains(field, "[") && strings.HasPrefix(strings.TrimSpace(line), "- ") {
		return true // an element of a list on the path (its field at fault is missing)
	}
	for _, k := range keyInPath.FindAllString(field, -1) {
		if strings.Contains(line, strings.Trim(k, `"`)+":") {
			return true
		}
	}
	return false
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestValidateCommandText: text output is one line per finding, file:line: severity: message,
// over several files of a directory (recursively, objects of one application spread over
// them), stdin, comments, empty documents and a kubectl List; a clean input prints nothing on
// stdout and exits 0.
func TestValidateCommandText(t *testing.T) {
	dir := t.TempDir()
	src := mustRead(t, "../validate/testdata/sui001-fail/input.yaml")
	r := &kio.ByteReader{Reader: bytes.NewReader(src), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	// pod.yaml: a comment, an empty document, then the Pod; rest/list.yaml: the other objects
	// as a v1 List; rest/.hidden/x.yaml must be skipped; notes.txt is not YAML.
	os.MkdirAll(filepath.Join(dir, "rest", ".hidden"), 0o755)
	os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte("# the driver\n---\n---\n"+items[0].MustString()), 0o600)
	list := yaml.MustParse("apiVersion: v1\nkind: List\nitems: []\n")
	seq, _ := list.Pipe(yaml.Lookup("items"))
	for _, it := range items[1:] {
		seq.YNode().Content = append(seq.YNode().Content, it.YNode())
	}
	os.WriteFile(filepath.Join(dir, "rest", "list.yml"), []byte(list.MustString()), 0o600)
	os.WriteFile(filepath.Join(dir, "rest", ".hidden", "x.yaml"), []byte("{{ not yaml"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("{{ not yaml"), 0o600)

	podLines := strings.Split(string(mustRead(t, filepath.Join(dir, "pod.yaml"))), "\n")
	wantLine := 0
	for i, l := range podLines {
		if strings.Contains(l, "containerPort: 0") {
			wantLine = i + 1
		}
	}
	code, stdout, stderr := runCmd(t, "", dir)
	want := fmt.Sprintf("%s:%d: error: [SUI001] driver container port \"spark-ui\" has containerPort 0: the API server rejects the Pod (\"containerPort: Required value\") (Pod analytics/wordcount-5b2d0c9e1f3a7b64-driver spec.containers[0].ports[2].containerPort)\n",
		filepath.Join(dir, "pod.yaml"), wantLine)
	if code != 1 || stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, stdout, want, stderr)
	}
	if !strings.Contains(stderr, "1 error, 0 warnings, 0 info in 6 objects from 2 files") {
		t.Errorf("summary: %q", stderr)
	}

	// The same objects on stdin, named for the report.
	var all bytes.Buffer
	for _, it := range items {
		all.WriteString("---\n" + it.MustString())
	}
	code, stdout, _ = runCmd(t, all.String(), "-", "--stdin-name", "prod.yaml")
	if code != 1 || !regexp.MustCompile(`^prod\.yaml:\d+: error: \[SUI001\] `).MatchString(stdout) || strings.Count(stdout, "\n") != 1 {
		t.Errorf("stdin: exit %d:\n%s", code, stdout)
	}

	// Clean: the passing fixture.
	clean, _ := plainInput(t, t.TempDir(), mustRead(t, "../validate/testdata/sui001-pass/input.yaml"))
	code, stdout, stderr = runCmd(t, "", clean)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "0 errors, 0 warnings, 0 info in 6 objects from 1 file") {
		t.Errorf("clean input: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestValidateCommandWarningsExit0: warnings and info are printed but do not fail the run.
func TestValidateCommandWarningsExit0(t *testing.T) {
	m, _ := plainInput(t, t.TempDir(), mustRead(t, "../validate/testdata/sui011-fail/input.yaml"))
	code, stdout, _ := runCmd(t, "", m)
	if code != 0 || !strings.Contains(stdout, ": warning: [SUI011] ") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestValidateCommandConfig: --config carries the other settings (here createRBAC: false turns
// a missing grant into a warning) and its mode is forced to validate; an invalid config is
// unusable input.
func TestValidateCommandConfig(t *testing.T) {
	dir := t.TempDir()
	m, _ := plainInput(t, dir, mustRead(t, "../validate/testdata/sui007-fail/input.yaml"))
	cfg := filepath.Join(dir, "cfg.yaml")
	os.WriteFile(cfg, []byte("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: x\nspec:\n  mode: transform\n  rbac:\n    create: false\n"), 0o600)
	before := string(mustRead(t, m))
	code, stdout, stderr := runCmd(t, "", m, "--config", cfg)
	if code != 0 || !strings.Contains(stdout, ": warning: [SUI007] ") {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	if string(mustRead(t, m)) != before {
		t.Error("validate changed its input file")
	}
	os.WriteFile(cfg, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  serviceTyp: NodePort\n"), 0o600)
	code, stdout, stderr = runCmd(t, "", m, "--config", cfg)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "data.serviceTyp") {
		t.Errorf("bad config: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// kustomizationDir is a kustomization with a base below it (kustomization).
var kustomizationDir string

// kustomization writes a kustomization directory holding a Pod, once per test binary.
func kustomization(t *testing.T) string {
	if kustomizationDir == "" {
		kustomizationDir = filepath.Join(t.TempDir(), "overlay")
		os.MkdirAll(filepath.Join(kustomizationDir, "base"), 0o755)
		os.WriteFile(filepath.Join(kustomizationDir, "kustomization.yaml"), []byte("resources: [base]\n"), 0o600)
		os.WriteFile(filepath.Join(kustomizationDir, "base", "pod.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), 0o600)
	}
	return kustomizationDir
}

// TestValidateNamesTheFileOfANonObject: a Helm values.yaml in a validated directory is
// reported with its file and what to do with it, not as "object 2 of the input".
func TestValidateNamesTheFileOfANonObject(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "chart"), 0o755)
	values := filepath.Join(dir, "chart", "values.yaml")
	os.WriteFile(values, []byte("replicaCount: 1\nimage: {repository: spark}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o600)
	code, stdout, _ := runCmd(t, "", dir)
	want := values + ":1: error: [SUI030] document 1 of " + values + " is not a Kubernetes object: it has no apiVersion and no kind; kubectl refuses it, sparkui leaves it as it is. " +
		"If it is not a manifest (Helm values, a tool's settings), keep it out of the input: out of the directory given to sparkui-fn validate, or out of the kustomization's resources (apiVersion)\n"
	if code != 1 || stdout != want {
		t.Errorf("exit %d, report:\n%s\nwant exit 1 and:\n%s", code, stdout, want)
	}
}

// TestValidateCommandUnusableInput: exit 2 with the reason on stderr and nothing on stdout.
func TestValidateCommandUnusableInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o600)
		return p
	}
	unreadable := write("unreadable.yaml", "apiVersion: v1\n")
	os.Chmod(unreadable, 0)
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, "", "nope.yaml"},
		{"syntax error", []string{write("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n")}, "", "bad.yaml"},
		{"syntax error on stdin", []string{"-"}, "a: b\n---\nkind: Pod\n  bad: indent\n", "stdin"},
		{"tab indentation", []string{write("tab.yaml", "kind: Pod\nmetadata:\n\tname: x\n")}, "", "tab.yaml"},
		{"scalar document", []string{write("scalar.yaml", "apiVersion: v1\nkind: Pod\n---\njust a string\n")}, "", "scalar.yaml:4: document 2 is not a mapping"},
		{"list item not an object", []string{write("list.yaml", "apiVersion: v1\nkind: List\nitems:\n- 3\n")}, "", "list.yaml:4"},
		{"unknown flag", []string{"--outptu", "json"}, "", "unknown flag --outptu"},
		{"bad output", []string{"--output", "xml"}, "", `--output "xml"`},
		{"missing value", []string{"--output"}, "", "needs a value"},
		{"missing config", []string{"-", "--config", filepath.Join(dir, "none.yaml")}, "", "none.yaml"},
		{"empty stdin", []string{"-"}, "", "no objects in stdin: nothing to validate, which a gate must not pass. If the input is a pipe, the command before it wrote nothing: see its error above, and run the pipeline under set -o pipefail"},
		{"only comments", []string{write("empty.yaml", "# nothing\n---\n")}, "", "no objects in " + filepath.Join(dir, "empty.yaml")},
		{"kustomization directory", []string{kustomization(t)}, "", "is a kustomization (" + filepath.Join(kustomizationDir, "kustomization.yaml") + "): validate what it builds, not its files:\n" +
			"  kustomize build --enable-alpha-plugins --enable-exec " + kustomizationDir + " | sparkui-fn validate --stdin-name " + kustomizationDir + " -"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tc.stdin, tc.args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming %q", code, stdout, stderr, tc.want)
			}
		})
	}
	if os.Geteuid() != 0 { // root reads anything
		code, _, stderr := runCmd(t, "", unreadable)
		if code != 2 || !strings.Contains(stderr, "permission denied") {
			t.Errorf("unreadable file: exit %d, %s", code, stderr)
		}
	}
	if code, stdout, _ := runCmd(t, "", "--help"); code != 0 || !strings.Contains(stdout, "Usage:\n  sparkui-fn validate [FILE|DIR|-]...") {
		t.Errorf("--help: exit %d %q", code, stdout)
	}
}
