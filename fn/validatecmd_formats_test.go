package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/sparkui/sparkui/validate"
)

// The SARIF and JUnit formats of `sparkui-fn validate`, checked against their schemas and counts.

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
