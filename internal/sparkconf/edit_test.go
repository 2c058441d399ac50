package sparkconf

import "testing"

// TestSet: the key's lines (continued ones too) give way to one escaped line at the end, the
// rest is kept line for line, a text that already says it is returned unchanged, and what
// Set writes Parse reads back.
func TestSet(t *testing.T) {
	for _, tc := range []struct{ text, key, value, want string }{
		{"a=1\n", "spark.ui.proxyBase", "/spark/x", "a=1\nspark.ui.proxyBase=/spark/x\n"},
		{"# c\nspark.ui.proxyBase=/old\nb=2", "spark.ui.proxyBase", "/new", "# c\nb=2\nspark.ui.proxyBase=/new\n"},
		{"spark.ui.proxyBase /a\\\n  b\nc=3\n", "spark.ui.proxyBase", "/x", "c=3\nspark.ui.proxyBase=/x\n"},
		{"spark.ui.proxyRedirectUri=https\\://h\n", "spark.ui.proxyRedirectUri", "https://h", "spark.ui.proxyRedirectUri=https\\://h\n"},
		{"a=1\n", "spark.ui.proxyRedirectUri", "https://h", "a=1\nspark.ui.proxyRedirectUri=https\\://h\n"},
		{"a=1\nspark.ui.proxyBase=/p\n", "spark.ui.proxyBase", "", "a=1\n"},
		{"a=1\n", "spark.ui.proxyBase", "", "a=1\n"},
	} {
		got, changed := Set(tc.text, tc.key, tc.value)
		if got != tc.want || changed != (tc.text != tc.want) {
			t.Errorf("Set(%q, %s, %q) = %q, %v; want %q", tc.text, tc.key, tc.value, got, changed, tc.want)
		}
		p, err := Parse(got)
		if err != nil || (tc.value != "" && p[tc.key] != tc.value) || (tc.value == "" && p[tc.key] != "") {
			t.Errorf("Parse(%q)[%s] = %q, %v; want %q", got, tc.key, p[tc.key], err, tc.value)
		}
	}
}
