package yamlx

import "testing"

// TestCheckStream: a syntax error is placed at its document and its line in the whole stream
// (yaml.v3 counts within the document, a line early for parser errors and for a tab breaking
// indentation), and a NUL byte or invalid UTF-8 at its line and column.
func TestCheckStream(t *testing.T) {
	first := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n"
	for _, tc := range []struct{ in, want string }{
		{first + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [b\n", "document 2, line 9: did not find expected ',' or ']'"},
		{first + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n\tlabels: {}\n", "document 2, line 10, column 1: found a tab character that violates indentation"},
		{first + "kind: Pod\nmetadata:\n\tname: x\n", "document 2, line 8, column 1: found character that cannot start any token (a tab: YAML indents with spaces only)"},
		{first + "kind: Pod\nmetadata:\n  name: b\x00c\n", "document 2, line 8, column 10: control character U+0000 is not allowed"},
		{first + "kind: Pod\nmetadata:\n  name: b\xffc\n", "document 2, line 8, column 10: invalid UTF-8 (byte 0xff)"},
		{"kind: Pod\n  bad: indent\n", "document 1, line 2: mapping values are not allowed in this context"},
	} {
		e := CheckStream([]byte(tc.in))
		if e == nil || e.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.in, e, tc.want)
		}
	}
	if e := CheckStream([]byte(first + "kind: Pod\n")); e != nil {
		t.Errorf("valid stream: %v", e)
	}
}
