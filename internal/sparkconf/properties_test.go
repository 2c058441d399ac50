package sparkconf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want map[string]string
	}{
		{"spark-submit output", "#Java properties built from Kubernetes config map\n#Sat Nov 28 09:12:44 UTC 2026\nspark.master=k8s\\://https\\://kubernetes.default.svc\\:443\nspark.ui.port=0\n",
			map[string]string{"spark.master": "k8s://https://kubernetes.default.svc:443", "spark.ui.port": "0"}},
		{"separators", "a=1\nb:2\nc 3\nd = 4\ne : 5\nf\t6\ng   =   7  \n",
			map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7"}},
		{"comments and blanks", "# c\n! bang\n   # indented\n\n   \nk=v\n", map[string]string{"k": "v"}},
		{"continuation", "k=a\\\n    b\\\n  c\nnext=1\n", map[string]string{"k": "abc", "next": "1"}},
		{"even backslashes do not continue", "k=a\\\\\nnext=1\n", map[string]string{"k": `a\`, "next": "1"}},
		{"escaped separators in key", "a\\=b=c\\:d\nx\\ y z\n", map[string]string{"a=b": "c:d", "x y": "z"}},
		{"escapes", `k=x\t\n\r\f\u0041\q`, map[string]string{"k": "x\t\n\r\fAq"}},
		{"values trimmed like Java's String.trim", "k=\\t v\\u0000\u00a0", map[string]string{"k": "v\u0000\u00a0"}},
		{"surrogate pair", `k=\ud83d\ude00`, map[string]string{"k": "😀"}},
		{"key only", "lonely\n", map[string]string{"lonely": ""}},
		{"later wins", "k=1\nk=2\n", map[string]string{"k": "2"}},
		{"CRLF and CR", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"continuation at EOF", "k=v\\", map[string]string{"k": "v"}},
		{"comment is not continued", "# c \\\nk=v\n", map[string]string{"k": "v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"k=\\u12G4", "a=1\nb=\\u12", "\\uZZZZ=v"} {
		_, err := Parse(in)
		se, ok := err.(*SyntaxError)
		if !ok {
			t.Fatalf("Parse(%q) = %v, want a SyntaxError", in, err)
		}
		if !strings.Contains(se.Error(), "malformed \\uxxxx") || se.Line < 1 {
			t.Errorf("Parse(%q): %v", in, se)
		}
	}
	_, err := Parse("a=1\n\nb=\\u12")
	if err == nil || err.(*SyntaxError).Line != 3 {
		t.Errorf("line of error = %v, want 3", err)
	}
}

// escape writes s so that Parse reads it back exactly (keys escape their separators).
func escape(s string, key bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		r := s[i]
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\f':
			b.WriteString(`\f`)
		case key && (r == '=' || r == ':' || r == ' ' || r == '#' || r == '!'):
			b.WriteByte('\\')
			b.WriteByte(r)
		case !key && i == 0 && r == ' ':
			b.WriteString(`\ `)
		default:
			b.WriteByte(r) // bytes as they are: Parse keeps invalid UTF-8 untouched
		}
	}
	return b.String()
}

// FuzzParse: never panics, and whatever it reads survives a write and a second read.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a=b", "k\\\n v", "#c\n!d\nx:y", "k=\\u0041", "k=\\ud83d\\ude00", "a\\=b=c", "\\", "k=\\u12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		props, err := Parse(in)
		if err != nil {
			return
		}
		var b strings.Builder
		for k, v := range props {
			b.WriteString(escape(k, true) + "=" + escape(v, false) + "\n")
		}
		again, err := Parse(b.String())
		if err != nil {
			t.Fatalf("re-reading %q: %v", b.String(), err)
		}
		for k, v := range props {
			if again[k] != v {
				t.Fatalf("key %q: %q became %q (written as %q)", k, v, again[k], b.String())
			}
		}
		if len(again) != len(props) {
			t.Fatalf("%d keys became %d", len(props), len(again))
		}
	})
}
