package validatecmd

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestNormalizeArgs: the spellings the hand-written parser accepted reach pflag in its form;
// paths, "-" and everything after "--" are left alone.
func TestNormalizeArgs(t *testing.T) {
	in := []string{"-output", "json", "-config=c.yaml", "--o", "sarif", "-stdin-name", "x", "-h", "-", "a.yaml", "-other", "--", "-output"}
	want := []string{"--output", "json", "--config=c.yaml", "-o", "sarif", "--stdin-name", "x", "-h", "-", "a.yaml", "-other", "--", "-output"}
	if got := NormalizeArgs(in); !reflect.DeepEqual(got, want) {
		t.Errorf("NormalizeArgs = %q, want %q", got, want)
	}
}

// TestFlagErrors: a usage error is one line naming the flag as typed and where the help is,
// with exit 2 (the help is not reprinted after it).
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--outptu", "json"}, "sparkui-fn validate: unknown flag --outptu (--help lists the flags)\n"},
		{[]string{"-x"}, "sparkui-fn validate: unknown flag -x (--help lists the flags)\n"},
		{[]string{"--output"}, "sparkui-fn validate: flag --output needs a value (--help lists the flags)\n"},
		{[]string{"-o"}, "sparkui-fn validate: flag -o needs a value (--help lists the flags)\n"},
		{[]string{"--output", "xml"}, "sparkui-fn validate: --output \"xml\": want text, json, sarif or junit\n"},
		{[]string{"--stdin-name="}, "sparkui-fn validate: --stdin-name must not be empty\n"},
	} {
		cmd := New()
		var stdout, stderr bytes.Buffer
		cmd.SetArgs(tc.args)
		cmd.SetIn(strings.NewReader(""))
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		err := cmd.Execute()
		if code, ok := err.(ExitCode); !ok || code != ExitUnusable || stdout.Len() != 0 || stderr.String() != tc.want {
			t.Errorf("%q: err %v, stdout %q, stderr %q; want exit 2 and %q", tc.args, err, stdout.String(), stderr.String(), tc.want)
		}
	}
}
