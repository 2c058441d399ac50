package yamlx

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parseDoc(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var d yaml.Node
	if err := yaml.NewDecoder(strings.NewReader(s)).Decode(&d); err != nil {
		t.Fatal(err)
	}
	return d.Content[0]
}

// TestDeAnchor: shared templates and merge keys expand as the function expands them (Expand:
// merged keys where the merge key stood, the mapping's own keys winning); a bomb and
// an alias inside its own anchor are refused without expanding, leaving the node as it was.
func TestDeAnchor(t *testing.T) {
	n := parseDoc(t, "base: &b {cores: 1, memory: 1g}\ndriver: *b\nexecutor:\n  <<: *b\n  cores: 2\n")
	if err := DeAnchor(n); err != nil {
		t.Fatal(err)
	}
	out, _ := yaml.NewRNode(n).String()
	want := "base: {cores: 1, memory: 1g}\ndriver: {cores: 1, memory: 1g}\nexecutor:\n  memory: 1g\n  cores: 2\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}

	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for l := 1; l <= 10; l++ {
		p := "*l" + itoa(l-1)
		b.WriteString("l" + itoa(l) + ": &l" + itoa(l) + " [" + strings.TrimSuffix(strings.Repeat(p+", ", 10), ", ") + "]\n")
	}
	for name, src := range map[string]string{"bomb": b.String(), "cycle": "a: &a [x, *a]\n"} {
		n := parseDoc(t, src)
		before, _ := yaml.NewRNode(n).String()
		err := DeAnchor(n)
		var ae *AliasError
		if !errors.As(err, &ae) || ae.Line != 1 || (name == "cycle") != (ae.Limit == 0) {
			t.Errorf("%s: %v, want an AliasError at line 1", name, err)
		}
		if after, _ := yaml.NewRNode(n).String(); after != before {
			t.Errorf("%s: the node changed", name)
		}
	}
}

func itoa(i int) string { return NewInt(i).Value }

// TestJSONStream: JSON lines and concatenated objects split into their values, with the line
// each starts on; one object, YAML, or JSON with anything else around is not a JSON stream.
func TestJSONStream(t *testing.T) {
	docs, ok := JSONStream([]byte("{\"a\": 1}\n{\"b\": [2]}\n\n{\n  \"c\": 3\n}\n"))
	var got []string
	for _, d := range docs {
		got = append(got, string(d.Text)+"@"+itoa(d.Line))
	}
	if !ok || strings.Join(got, " ") != "{\"a\": 1}@1 {\"b\": [2]}@2 {\n  \"c\": 3\n}@4" {
		t.Errorf("%v %q", ok, got)
	}
	for _, in := range []string{"{\"a\": 1}\n", "a: 1\n---\nb: 2\n", "{\"a\": 1}\n[1]\n", "{\"a\": 1}\nb: 2\n"} {
		if _, ok := JSONStream([]byte(in)); ok {
			t.Errorf("%q read as a JSON stream", in)
		}
	}
}
