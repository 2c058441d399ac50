package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var fixtureName = regexp.MustCompile(`^(sui\d{3})-(fail|pass)(-[a-z0-9-]+)?$`)

// TestRuleFixtures keeps the per-rule fixtures of testdata/validate honest, so they cannot
// drift from the catalog: every rule with a check has a failing (suiNNN-fail…) and a passing
// (suiNNN-pass…) fixture; each runs in validate mode; the results its expected.yaml holds
// (which TestGolden in fn proves the function writes) are exactly the "# expect: RULE
// SEVERITY KIND FIELD" lines of its input.yaml; a failing fixture's expectations include its
// rule at the catalog's severity, a passing one has no result of its rule; every result is
// tagged and prefixed with its rule; and the items come out as they went in.
func TestRuleFixtures(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/validate/*")
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]map[string]bool{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		m := fixtureName.FindStringSubmatch(name)
		if m == nil {
			t.Errorf("%s: fixture names are suiNNN-fail[-what] or suiNNN-pass[-what]", name)
			continue
		}
		id, kind := strings.ToUpper(m[1]), m[2]
		rule, ok := Lookup(id)
		if !ok {
			t.Errorf("%s: no rule %s", name, id)
			continue
		}
		if has[id] == nil {
			has[id] = map[string]bool{}
		}
		has[id][kind] = true
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			exp, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range strings.Split(string(in), "\n") {
				if e, ok := strings.CutPrefix(l, "# expect: "); ok && e != "none" {
					want = append(want, e)
				}
			}
			sort.Strings(want)

			inRL, inItems := readRL(t, in)
			outRL, outItems := readRL(t, exp)
			if mode := inRL.FunctionConfig; mode == nil || mode.GetKind() != "ConfigMap" || mode.GetDataMap()["mode"] != "validate" {
				t.Fatalf("functionConfig must be a ConfigMap with data.mode: validate")
			}
			if d := cmp.Diff(inItems, outItems); d != "" {
				t.Errorf("validate mode changed the items (-input +expected):\n%s", d)
			}

			var got []string
			own := false
			for _, r := range yamlItems(outRL.Results) {
				ruleID, sev, msg := lookup(r, "tags", "rule"), lookup(r, "severity"), lookup(r, "message")
				if !strings.HasPrefix(msg, "["+ruleID+"] ") {
					t.Errorf("message %q does not start with [%s]", msg, ruleID)
				}
				kindOf, field := lookup(r, "resourceRef", "kind"), lookup(r, "field", "path")
				if kindOf == "" {
					kindOf = "-"
				}
				if field == "" {
					field = "-"
				}
				got = append(got, strings.Join([]string{ruleID, sev, kindOf, field}, " "))
				if ruleID == id {
					own = true
					if kind == "fail" && sev != string(rule.Severity) {
						t.Errorf("%s has severity %s, the catalog says %s", id, sev, rule.Severity)
					}
				}
			}
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("expected.yaml's results differ from the # expect lines (-want +got):\n%s", d)
			}
			if kind == "fail" && !own {
				t.Errorf("failing fixture has no %s result", id)
			}
			if kind == "pass" && own {
				t.Errorf("passing fixture has a %s result", id)
			}
		})
	}
	for _, r := range Rules {
		if r.Check == nil {
			continue // SUI014 is the functionConfig's: testdata/bad-config*
		}
		if !has[r.ID]["fail"] || !has[r.ID]["pass"] {
			t.Errorf("%s lacks a failing or a passing fixture in testdata/validate", r.ID)
		}
	}
}

func readRL(t *testing.T, b []byte) (*kio.ByteReader, []string) {
	t.Helper()
	r := &kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.MustString())
	}
	return r, out
}

func yamlItems(n *yaml.RNode) []*yaml.RNode {
	if n == nil {
		return nil
	}
	els, _ := n.Elements()
	return els
}

func lookup(r *yaml.RNode, path ...string) string {
	n, err := r.Pipe(yaml.Lookup(path...))
	if err != nil || n == nil {
		return ""
	}
	return n.YNode().Value
}
