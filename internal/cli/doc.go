package cli

import (
	"fmt"
	"os"
	"strings"
)

// docs/cli.md holds one generated section per binary, between these markers; the tests of
// each binary's package compare its section with its --help outputs (and rewrite it with
// UPDATE_GOLDEN=1, which `make generate` sets).
func begin(name string) string { return "<!-- BEGIN " + name + " (generated: make generate) -->\n" }
func end(name string) string   { return "<!-- END " + name + " -->\n" }

// Section is the text of section name of the file at path.
func Section(path, name string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	i, j := strings.Index(s, begin(name)), strings.Index(s, end(name))
	if i < 0 || j < i {
		return "", fmt.Errorf("%s has no section %q (markers %q … %q)", path, name, strings.TrimSpace(begin(name)), strings.TrimSpace(end(name)))
	}
	return s[i+len(begin(name)) : j], nil
}

// WriteSection replaces section name of the file at path with text.
func WriteSection(path, name, text string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, begin(name)), strings.Index(s, end(name))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no section %q", path, name)
	}
	return os.WriteFile(path, []byte(s[:i+len(begin(name))]+text+s[j:]), 0o644)
}

// DocHelp is one --help output as docs/cli.md shows it.
func DocHelp(command, help string) string {
	return fmt.Sprintf("### `%s`\n\n```text\n%s```\n\n", command, help)
}
