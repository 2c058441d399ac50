package validate

import (
	"os"
	"regexp"
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
