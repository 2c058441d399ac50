package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/validate"
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

func sarifSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	b := mustRead(t, "../testdata/assets/sarif-schema-2.1.0.json")
	if err := c.AddResource("sarif-schema-2.1.0.json", bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatalf("the SARIF schema does not compile: %v", err)
	}
	return s
}

// TestValidateSARIF: the SARIF output validates against the SARIF 2.1.0 JSON Schema on every
// rule fixture (clean and failing), carries every rule with its help text, and one result per
// finding at the finding's file and line; the schema itself rejects broken logs, so the check
// means something.
func TestValidateSARIF(t *testing.T) {
	schema := sarifSchema(t)
	for _, in := range validateFixtures(t) {
		name := filepath.Base(filepath.Dir(in))
		t.Run(name, func(t *testing.T) {
			m, cfg := plainInput(t, t.TempDir(), mustRead(t, in))
			args := []string{m}
			if cfg != "" {
				args = append(args, "--config", cfg)
			}
			_, sarif, stderr := runCmd(t, "", append(args, "--output", "sarif")...)
			_, js, _ := runCmd(t, "", append(args, "--output", "json")...)
			var doc any
			if err := json.Unmarshal([]byte(sarif), &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s%s", err, sarif, stderr)
			}
			if err := schema.Validate(doc); err != nil {
				t.Fatalf("SARIF output is not valid SARIF 2.1.0: %#v", err)
			}
			var log struct {
				Version string
				Runs    []struct {
					Tool struct {
						Driver struct {
							Name  string
							Rules []struct {
								ID               string
								ShortDescription struct{ Text string }
								FullDescription  struct{ Text string }
								Help             struct{ Text, Markdown string }
								HelpURI          string
							}
						}
					}
					Results []struct {
						RuleID    string
						RuleIndex int
						Level     string
						Locations []struct {
							PhysicalLocation struct {
								ArtifactLocation struct{ URI string }
								Region           struct{ StartLine int }
							}
						}
					}
				}
			}
			json.Unmarshal([]byte(sarif), &log)
			var jo jsonOut
			json.Unmarshal([]byte(js), &jo)
			run := log.Runs[0]
			if len(run.Tool.Driver.Rules) != len(validate.Rules) {
				t.Fatalf("%d rules in the driver, want %d", len(run.Tool.Driver.Rules), len(validate.Rules))
			}
			for i, r := range run.Tool.Driver.Rules {
				d := validate.Rules[i]
				if r.ID != validate.Rules[i].ID || r.ShortDescription.Text != validate.Rules[i].Title ||
					!strings.Contains(r.FullDescription.Text, d.Why) || !strings.Contains(r.Help.Text, d.Fix) ||
					!strings.Contains(r.Help.Markdown, d.Fix) || r.HelpURI == "" {
					t.Errorf("rule %d: %+v", i, r)
				}
			}
			if len(run.Results) != len(jo.Results) {
				t.Fatalf("%d SARIF results for %d findings", len(run.Results), len(jo.Results))
			}
			levels := map[string]string{"error": "error", "warning": "warning", "info": "note"}
			for i, r := range run.Results {
				f := jo.Results[i]
				if r.RuleID != f.Rule || validate.Rules[r.RuleIndex].ID != f.Rule || r.Level != levels[f.Severity] ||
					len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.Region.StartLine != f.File.Line ||
					uriPath(r.Locations[0].PhysicalLocation.ArtifactLocation.URI) != filepath.ToSlash(m) {
					t.Errorf("result %d %+v does not match finding %+v", i, r, f)
				}
			}
		})
	}

	// The schema rejects what SARIF consumers reject.
	m, _ := plainInput(t, t.TempDir(), mustRead(t, "../validate/testdata/sui002-fail/input.yaml"))
	_, good, _ := runCmd(t, "", m, "-o", "sarif")
	for _, tc := range []struct {
		name   string
		mutate func(map[string]any)
	}{
		{"version", func(l map[string]any) { l["version"] = "2.0.0" }},
		{"no runs", func(l map[string]any) { delete(l, "runs") }},
		{"no tool", func(l map[string]any) { delete(run0(l), "tool") }},
		{"driver without name", func(l map[string]any) { delete(run0(l)["tool"].(map[string]any)["driver"].(map[string]any), "name") }},
		{"rule without id", func(l map[string]any) {
			delete(run0(l)["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any)[0].(map[string]any), "id")
		}},
		{"level", func(l map[string]any) { result0(l)["level"] = "fatal" }},
		{"result without message", func(l map[string]any) { delete(result0(l), "message") }},
		{"unknown result property", func(l map[string]any) { result0(l)["severity"] = "error" }},
		{"startLine 0", func(l map[string]any) {
			result0(l)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["region"].(map[string]any)["startLine"] = 0
		}},
		{"uri not a URI reference", func(l map[string]any) {
			result0(l)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)["uri"] = "a b%zz"
		}},
		{"locations not an array", func(l map[string]any) { result0(l)["locations"] = map[string]any{} }},
	} {
		var l map[string]any
		json.Unmarshal([]byte(good), &l)
		tc.mutate(l)
		if err := schema.Validate(l); err == nil {
			t.Errorf("the schema accepts a SARIF log with a broken %s", tc.name)
		}
	}
}

func uriPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Path
}

func run0(l map[string]any) map[string]any { return l["runs"].([]any)[0].(map[string]any) }
func result0(l map[string]any) map[string]any {
	return run0(l)["results"].([]any)[0].(map[string]any)
}

type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestValidateJUnit: the JUnit XML parses; every count attribute equals what it counts; there
// is a test case per object and rule; a case fails exactly when its rule found an error on its
// object, and carries every such error; warnings and info are in system-out.
func TestValidateJUnit(t *testing.T) {
	checkRules := 0
	for _, r := range validate.Rules {
		if r.Check != nil {
			checkRules++
		}
	}
	for _, in := range validateFixtures(t) {
		name := filepath.Base(filepath.Dir(in))
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			m, cfg := plainInput(t, dir, mustRead(t, in))
			// Split the objects over two files to get two suites.
			docs := strings.SplitAfter(string(mustRead(t, m)), "\n---\n")
			m2 := filepath.Join(dir, "more.yaml")
			os.WriteFile(m, []byte(strings.Join(docs[:len(docs)/2], "")), 0o600)
			os.WriteFile(m2, []byte(strings.Join(docs[len(docs)/2:], "")), 0o600)
			args := []string{m, m2}
			if cfg != "" {
				args = append(args, "--config", cfg)
			}
			codeX, x, stderr := runCmd(t, "", append(args, "-o", "junit")...)
			codeJ, js, _ := runCmd(t, "", append(args, "-o", "json")...)
			if codeX != codeJ {
				t.Errorf("exit %d with junit, %d with json", codeX, codeJ)
			}
			var doc junitDoc
			if err := xml.Unmarshal([]byte(x), &doc); err != nil {
				t.Fatalf("not XML: %v\n%s%s", err, x, stderr)
			}
			var jo jsonOut
			json.Unmarshal([]byte(js), &jo)
			if len(doc.Suites) != 2 || doc.Suites[0].Name != m || doc.Suites[1].Name != m2 {
				t.Fatalf("suites: %+v", doc.Suites)
			}
			errorsByCase := map[string][]string{}
			other := 0
			for _, f := range jo.Results {
				k := fmt.Sprintf("%s/%d/%s", f.File.Path, f.File.Index, f.Rule)
				if f.Severity == "error" {
					errorsByCase[k] = append(errorsByCase[k], f.Message)
				} else {
					other++
				}
			}
			tests, failures, seenOther := 0, 0, 0
			for _, s := range doc.Suites {
				sf := 0
				for _, c := range s.Cases {
					if c.Failure != nil {
						sf++
					}
					seenOther += len(strings.FieldsFunc(c.SystemOut, func(r rune) bool { return r == '\n' }))
				}
				if s.Tests != len(s.Cases) || s.Failures != sf {
					t.Errorf("suite %s: tests=%d failures=%d, but %d cases, %d failing", s.Name, s.Tests, s.Failures, len(s.Cases), sf)
				}
				tests += s.Tests
				failures += s.Failures
			}
			if doc.Tests != tests || doc.Failures != failures {
				t.Errorf("testsuites: tests=%d failures=%d, suites add up to %d and %d", doc.Tests, doc.Failures, tests, failures)
			}
			if tests != jo.Summary.Objects*checkRules {
				t.Errorf("%d test cases for %d objects × %d rules", tests, jo.Summary.Objects, checkRules)
			}
			if failures != len(errorsByCase) {
				t.Errorf("%d failing cases, %d (object, rule) pairs with errors", failures, len(errorsByCase))
			}
			if seenOther != other {
				t.Errorf("%d warning/info lines in system-out, %d such findings", seenOther, other)
			}
			for _, s := range doc.Suites {
				for _, c := range s.Cases {
					if c.Failure == nil {
						continue
					}
					if !strings.HasPrefix(c.Name, c.Failure.Type+" ") {
						t.Errorf("case %q fails with type %s", c.Name, c.Failure.Type)
					}
					n := 0
					for k, msgs := range errorsByCase {
						if strings.HasPrefix(k, s.Name+"/") && strings.HasSuffix(k, "/"+c.Failure.Type) {
							for _, msg := range msgs {
								if strings.Contains(c.Failure.Text, oneLine(msg)) {
									n++
								}
							}
						}
					}
					if n == 0 {
						t.Errorf("failure of %s %s carries none of its errors: %q", c.Classname, c.Name, c.Failure.Text)
					}
				}
			}
		})
	}
}

// TestTransformOutputValidatesClean: on every top-level fixture, transform mode reports no
// error but those bad input causes (SUI014 invalid functionConfig, SUI015 unreadable
// properties, SUI019 duplicate objects, SUI021 duplicate keys, SUI030 unreadable carriers,
// SUI047 unreadable Service ports, left unchanged, SUI053 a route sparkui cannot write, SUI054
// routes that the configuration makes collide across applications), and validate mode on the
// transform output agrees: whatever the function writes passes its own rules.
func TestTransformOutputValidatesClean(t *testing.T) {
	badInput := map[string]bool{"SUI014": true, "SUI015": true, "SUI019": true, "SUI021": true, "SUI030": true, "SUI047": true, "SUI053": true, "SUI054": true}
	for _, in := range fixtures(t) {
		t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
			r := &kio.ByteReader{Reader: bytes.NewReader(mustRead(t, in)), OmitReaderAnnotations: true}
			items, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			rl := &framework.ResourceList{Items: items, FunctionConfig: r.FunctionConfig}
			if err := function.Process(rl); err != nil {
				t.Fatal(err)
			}
			for _, res := range rl.Results {
				if res.Severity == framework.Error && !badInput[res.Tags["rule"]] {
					t.Errorf("transform mode reports an error: %s", res)
				}
			}
			v := &framework.ResourceList{Items: rl.Items, FunctionConfig: asValidate(t, r.FunctionConfig)}
			if err := function.Process(v); err != nil {
				t.Fatal(err)
			}
			for _, res := range v.Results {
				// An application transform refused (SUI030) is still untransformed, and
				// SUI060 says why it was refused.
				refused := res.Tags["rule"] == "SUI060" && strings.Contains(res.Message, "would refuse to")
				if res.Severity == framework.Error && !badInput[res.Tags["rule"]] && !refused {
					t.Errorf("validate mode on the transform output reports an error: %s", res)
				}
			}
		})
	}
}

// asValidate is fc with mode validate (fc's other settings kept).
func asValidate(t testing.TB, fc *yaml.RNode) *yaml.RNode {
	t.Helper()
	if fc == nil {
		return yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata: {mode: validate}\n")
	}
	c := fc.Copy()
	var err error
	if c.GetKind() == "ConfigMap" {
		_, err = c.Pipe(yaml.LookupCreate(yaml.MappingNode, "data"), yaml.SetField("mode", yaml.NewStringRNode("validate")))
	} else {
		_, err = c.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("mode", yaml.NewStringRNode("validate")))
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestValidateFixturesLeaveItems: on every rule fixture (all in validate mode) the items are
// written exactly as a no-op function writes them.
func TestValidateFixturesLeaveItems(t *testing.T) {
	for _, in := range validateFixtures(t) {
		src := mustRead(t, in)
		got := runProcessor(t, src)
		if i := bytes.Index(got, []byte("\nresults:\n")); i >= 0 {
			got = got[:i+1]
		}
		if noop := runNoop(t, src); string(got) != string(noop) {
			t.Errorf("%s: validate mode changed items", in)
		}
	}
}

// BenchmarkValidate is validate mode (ConfigMap mode: validate) on N spark-submit applications
// (input: beside BenchmarkFloor) and on the function's output for them (output: beside
// BenchmarkFloorOutput), what a pre-merge check of built manifests sees.
func BenchmarkValidate(b *testing.B) {
	for _, in := range validateBenchInputs(b) {
		b.Run(in.name, func(b *testing.B) { benchmarkOn(b, processor(), in.data) })
	}
}

// BenchmarkFloorValidate is the no-op floor on exactly what BenchmarkValidate reads;
// BenchmarkFloorValidateOut the no-op on what it writes (the items plus its results), the I/O
// validate mode cannot avoid.
func BenchmarkFloorValidate(b *testing.B) {
	for _, in := range validateBenchInputs(b) {
		b.Run(in.name, func(b *testing.B) { benchmarkOn(b, noop, in.data) })
	}
}

func BenchmarkFloorValidateOut(b *testing.B) {
	for _, in := range validateBenchInputs(b) {
		out := runProcessor(b, in.data)
		b.Run(in.name, func(b *testing.B) { benchmarkOn(b, noop, out) })
	}
}

type benchInput struct {
	name string
	data []byte
}

func validateBenchInputs(b *testing.B) []benchInput {
	var out []benchInput
	for _, kind := range []string{"input", "output"} {
		for _, n := range []int{1, 100, 1000} {
			in := appsInput(b, n)
			if kind == "output" {
				in = runProcessor(b, in)
			}
			out = append(out, benchInput{fmt.Sprintf("%s/apps=%d", kind, n), withValidateConfig(in)})
		}
	}
	return out
}

func withValidateConfig(rl []byte) []byte {
	if i := bytes.Index(rl, []byte("\nresults:\n")); i >= 0 {
		rl = rl[:i+1]
	}
	return append(bytes.TrimRight(rl, "\n"), []byte("\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: sparkui\n  data:\n    mode: validate\n")...)
}

func TestBenchValidateInput(t *testing.T) {
	for _, in := range [][]byte{withValidateConfig(appsInput(t, 3)), withValidateConfig(runProcessor(t, appsInput(t, 3)))} {
		out := runProcessor(t, in)
		if n := itemCount(t, out); n != 3*3 && n != 3*6 {
			t.Errorf("%d items", n)
		}
		if !bytes.Contains(out, []byte("mode: validate")) {
			t.Error("not in validate mode")
		}
	}
}

// TestValidateModeInKustomizeAndKpt pins what docs/validate.md tells users, with the real
// tools: kustomize's validators: field refuses sparkui-fn (kyaml hands the items back with
// path annotations, and kustomize wants them untouched), a transformers: entry in validate
// mode leaves the build exactly as it is without it and fails the build on an error finding,
// and kpt runs it as a pipeline validator. It needs the kustomize CLI (SPARKUI_KUSTOMIZE, or
// `make kustomize`'s cache) and kpt on PATH, like the examples' tests.
func TestValidateModeInKustomizeAndKpt(t *testing.T) {
	kustomize := os.Getenv("SPARKUI_KUSTOMIZE")
	if kustomize == "" {
		home, _ := os.UserHomeDir()
		kustomize = filepath.Join(home, ".cache", "sparkui", "bin", "kustomize-v5.8.1")
	}
	if _, err := os.Stat(kustomize); err != nil {
		t.Fatalf("the kustomize CLI is needed (make kustomize): %v", err)
	}
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Fatalf("kpt is needed on PATH: %v", err)
	}
	dir := t.TempDir()
	fn := filepath.Join(dir, "sparkui-fn")
	if out, err := exec.Command("go", "build", "-o", fn, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runTool := func(name string, args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	fnConfig := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sparkui-validate\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + fn + "\ndata:\n  mode: validate\n"
	pkg := func(fixture, tag, kustomization string) string {
		d := filepath.Join(dir, fixture+"-"+tag)
		os.MkdirAll(d, 0o755)
		m, _ := plainInput(t, d, mustRead(t, "../validate/testdata/"+fixture+"/input.yaml"))
		os.Rename(m, filepath.Join(d, "m.yaml"))
		os.WriteFile(filepath.Join(d, "sparkui-validate.yaml"), []byte(fnConfig), 0o600)
		os.WriteFile(filepath.Join(d, "kustomization.yaml"), []byte("resources:\n- m.yaml\n"+kustomization), 0o600)
		return d
	}

	plain, _, err := runTool(kustomize, "build", pkg("sui001-pass", "plain", ""))
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runTool(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", pkg("sui001-pass", "validators", "validators:\n- sparkui-validate.yaml\n"))
	if err == nil || !strings.Contains(stderr, "validator shouldn't modify the resource map") {
		t.Errorf("kustomize validators: accepted sparkui-fn, or failed otherwise: %v\n%s", err, stderr)
	}
	out, stderr, err := runTool(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", pkg("sui001-pass", "transformers", "transformers:\n- sparkui-validate.yaml\n"))
	if err != nil || out != plain {
		t.Errorf("kustomize transformers: in validate mode: %v\n%s\n(-without +with):\n%s", err, stderr, cmp.Diff(plain, out))
	}
	_, stderr, err = runTool(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", pkg("sui001-fail", "transformers", "transformers:\n- sparkui-validate.yaml\n"))
	if err == nil || !strings.Contains(stderr, "[SUI001]") {
		t.Errorf("kustomize build with an error finding: %v\n%s", err, stderr)
	}

	kptfile := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  validators:\n  - exec: " + fn + "\n    configMap:\n      mode: validate\n"
	for fixture, wantOK := range map[string]bool{"sui001-pass": true, "sui001-fail": false} {
		d := filepath.Join(dir, "kpt-"+fixture)
		os.MkdirAll(d, 0o755)
		plainInput(t, d, mustRead(t, "../validate/testdata/"+fixture+"/input.yaml"))
		os.Remove(filepath.Join(d, "fn-config.yaml"))
		os.WriteFile(filepath.Join(d, "Kptfile"), []byte(kptfile), 0o600)
		out, stderr, err := runTool(kpt, "fn", "render", d, "--allow-exec", "--output", "unwrap")
		if ok := err == nil; ok != wantOK || (!wantOK && !strings.Contains(out+stderr, "[SUI001]")) {
			t.Errorf("kpt fn render %s: %v\n%s%s", fixture, err, out, stderr)
		}
	}
}

// oneLine folds whitespace as the report formats do.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestValidateSkipsFIFO: a named pipe called *.yaml in a directory is reported (SUI052, a
// warning naming it) and not opened, where opening it blocked forever; the directory's
// other files are validated as usual.
func TestValidateSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o600)
	fifo := filepath.Join(dir, "feed.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	type res struct {
		code           int
		stdout, stderr string
	}
	done := make(chan res, 1)
	go func() {
		code, stdout, stderr := runCmd(t, "", dir, "--output", "json")
		done <- res{code, stdout, stderr}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		// Unblock the reader so the test can end.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("validate DIR hangs on a named pipe")
	}
	var out jsonOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var got []string
	for _, f := range out.Results {
		got = append(got, strings.Join([]string{f.Rule, f.Severity, f.File.Path, f.Message}, " | "))
	}
	want := []string{"SUI052 | warning | " + fifo + " | [SUI052] " + fifo + " is a named pipe, not a regular file: not read (reading it could block forever)"}
	if d := cmp.Diff(want, got); d != "" || r.code != 0 || out.Summary.Objects != 1 {
		t.Errorf("exit %d, %d objects; findings (-want +got):\n%s", r.code, out.Summary.Objects, d)
	}
}
