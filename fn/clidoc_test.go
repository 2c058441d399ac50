package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkui/sparkui/internal/cli"
)

//go:generate env UPDATE_GOLDEN=1 go test -count=1 -run ^TestCLIDoc$ .

// TestCLIDoc: docs/cli.md's sparkui-fn section is exactly what --help prints, for the
// function and validate; UPDATE_GOLDEN=1 (make generate) rewrites it.
func TestCLIDoc(t *testing.T) {
	var doc strings.Builder
	for _, args := range [][]string{{"--help"}, {"validate", "--help"}, {"policy", "--help"}, {"helm-postrenderer", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, nil, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
		doc.WriteString(cli.DocHelp("sparkui-fn "+strings.Join(args, " "), stdout.String()))
	}
	const path = "../docs/cli.md"
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := cli.WriteSection(path, "sparkui-fn", doc.String()); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := cli.Section(path, "sparkui-fn")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(doc.String(), got); d != "" {
		t.Errorf("docs/cli.md is stale: run make generate (-help +doc):\n%s", d)
	}
}

// TestCLIStyle: -h and --help print the same help on stdout with exit 0, a bad flag is one
// line on stderr with exit 2 (validate) or 1 (the function), and the help has the invocation
// forms, examples and exit statuses.
func TestCLIStyle(t *testing.T) {
	for _, c := range []struct {
		cmd      []string
		badCode  int
		sections []string
	}{
		{nil, 1, []string{"Usage:\n  sparkui-fn < resource-list.yaml", "  sparkui-fn CONFIG.yaml FILE...", "Examples:\n", "Exit status:\n  0  ", "\n  1  "}},
		{[]string{"validate"}, 2, []string{"Usage:\n  sparkui-fn validate [FILE|DIR|-]...", "  -o, --output FORMAT", "Examples:\n", "Exit status:\n  0  ", "\n  1  ", "\n  2  "}},
		{[]string{"policy"}, 2, []string{"Usage:\n  sparkui-fn policy", "Examples:\n", "Exit status:\n  0  ", "\n  1  ", "\n  2  "}},
		{[]string{"helm-postrenderer"}, 2, []string{"Usage:\n  sparkui-fn helm-postrenderer [CONFIG.yaml]", "Examples:\n", "Exit status:\n  0  ", "\n  1  ", "\n  2  "}},
	} {
		var helps []string
		for _, h := range []string{"-h", "--help"} {
			var stdout, stderr bytes.Buffer
			if code := run(append(append([]string{}, c.cmd...), h), nil, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
				t.Errorf("%v %s: exit %d, stderr %q", c.cmd, h, code, stderr.String())
			}
			helps = append(helps, stdout.String())
		}
		if helps[0] != helps[1] {
			t.Errorf("%v: -h and --help differ", c.cmd)
		}
		for _, s := range c.sections {
			if !strings.Contains(helps[1], s) {
				t.Errorf("%v --help lacks %q:\n%s", c.cmd, s, helps[1])
			}
		}
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{}, c.cmd...), "--no-such-flag"), nil, &stdout, &stderr)
		if code != c.badCode || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 ||
			!strings.Contains(stderr.String(), "--no-such-flag") || !strings.Contains(stderr.String(), "--help lists the flags") {
			t.Errorf("%v --no-such-flag: exit %d, stdout %q, stderr %q; want exit %d and one line", c.cmd, code, stdout.String(), stderr.String(), c.badCode)
		}
	}
}
