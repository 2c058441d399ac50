package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkui/sparkui/validate"
)

// TestRulesDocCurrent: docs/rules.md is what go generate would write now, so a rule's text,
// examples and fixture links cannot drift from its value in code.
func TestRulesDocCurrent(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(root, validate.Rules)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("docs/rules.md is stale: run go generate ./validate (-generated +checked in):\n%s", d)
	}
}

// TestTroubleshootingCurrent: docs/troubleshooting.md's table of error rules is what go
// generate would write now: every error rule of the catalog, with its fix.
func TestTroubleshootingCurrent(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := withErrorTable(string(page), validate.Rules)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, string(page)); d != "" {
		t.Errorf("docs/troubleshooting.md is stale: run go generate ./validate (-generated +checked in):\n%s", d)
	}
	for _, r := range validate.Rules {
		if r.Severity == "error" && !strings.Contains(string(page), "["+r.ID+"](rules.md#") {
			t.Errorf("docs/troubleshooting.md lacks error rule %s", r.ID)
		}
	}
}

// TestRulesDocLinks: every relative link of the page resolves.
func TestRulesDocLinks(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := render(root, validate.Rules)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	n := 0
	for _, m := range link.FindAllStringSubmatch(string(b), -1) {
		n++
		if _, err := os.Stat(filepath.Join(root, "docs", m[1])); err != nil {
			t.Errorf("docs/rules.md links %s, which does not exist", m[1])
		}
	}
	if n < len(validate.Rules)*2 {
		t.Errorf("only %d links", n)
	}
}

// TestRenderRefusesIncompleteRule: a rule without its text or examples is not published.
func TestRenderRefusesIncompleteRule(t *testing.T) {
	r := validate.Rules[0]
	r.Why = ""
	if _, err := render(".", []validate.Rule{r}); err == nil || !strings.Contains(err.Error(), r.ID) {
		t.Errorf("render of a rule without Why: err = %v", err)
	}
}
