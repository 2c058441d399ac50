package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRulesDocMatchesCatalog keeps docs/rules.md's table equal to Rules.
func TestRulesDocMatchesCatalog(t *testing.T) {
	b, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (SUI\d{3}) \| (\w+) \| (.+) \|$`)
	var doc, code [][3]string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, [3]string{m[1], m[2], m[3]})
	}
	for _, r := range Rules {
		code = append(code, [3]string{r.ID, string(r.Severity), r.Title})
	}
	if d := cmp.Diff(code, doc); d != "" {
		t.Errorf("docs/rules.md table differs from validate.Rules (-code +doc):\n%s", d)
	}
}

// TestRulesDocSections keeps each rule's section of docs/rules.md equal to its help text in
// code (Docs: what the SARIF report shows), with a failing and a passing example, and links to
// every fixture of the rule; every relative link of the page must resolve.
func TestRulesDocSections(t *testing.T) {
	b, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	heading := regexp.MustCompile(`(?m)^### (SUI\d{3})$`)
	locs := heading.FindAllStringSubmatchIndex(doc, -1)
	var ids []string
	sections := map[string]string{}
	for i, l := range locs {
		id := doc[l[2]:l[3]]
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		ids = append(ids, id)
		sections[id] = doc[l[1]:end]
	}
	var want []string
	for _, r := range Rules {
		want = append(want, r.ID)
	}
	if d := cmp.Diff(want, ids); d != "" {
		t.Errorf("### sections differ from the catalog (-code +doc):\n%s", d)
	}
	for _, r := range Rules {
		sec, d := norm(sections[r.ID]), Docs[r.ID]
		if d.Name == "" || d.Catches == "" || d.Why == "" || d.Fix == "" {
			t.Errorf("%s: incomplete Docs entry", r.ID)
		}
		for label, text := range map[string]string{"Catches": d.Catches, "Why it matters": d.Why, "Fix": d.Fix} {
			if !strings.Contains(sec, norm("**"+label+":** "+text)) {
				t.Errorf("%s: the section does not say, word for word, %s: %s", r.ID, label, text)
			}
		}
		if !strings.Contains(sec, "Failing: ```yaml") || !strings.Contains(sec, "Passing:") {
			t.Errorf("%s: the section needs a failing manifest and a passing one", r.ID)
		}
		fixtures, _ := filepath.Glob("../testdata/validate/" + strings.ToLower(r.ID) + "-*")
		for _, f := range fixtures {
			if !strings.Contains(sec, "(../testdata/validate/"+filepath.Base(f)+"/input.yaml)") {
				t.Errorf("%s: the section does not link fixture %s", r.ID, filepath.Base(f))
			}
		}
	}
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, m := range link.FindAllStringSubmatch(doc, -1) {
		if _, err := os.Stat(filepath.Join("../docs", m[1])); err != nil {
			t.Errorf("docs/rules.md links %s, which does not exist", m[1])
		}
	}
}
