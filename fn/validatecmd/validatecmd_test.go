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

// TestFlagErrors: pflag's errors are worded as the command has always worded them, followed
// by the usage, with exit 2.
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--outptu", "json"}, "sparkui-fn validate: unknown flag --outptu\nusage: "},
		{[]string{"-x"}, "sparkui-fn validate: unknown flag -x\nusage: "},
		{[]string{"--output"}, "sparkui-fn validate: flag --output needs a value\nusage: "},
		{[]string{"-o"}, "sparkui-fn validate: flag -o needs a value\nusage: "},
		{[]string{"--output", "xml"}, "sparkui-fn validate: --output \"xml\": want text, json, sarif or junit\nusage: "},
		{[]string{"--stdin-name="}, "sparkui-fn validate: --stdin-name must not be empty\nusage: "},
	} {
		cmd := New()
		var stdout, stderr bytes.Buffer
		cmd.SetArgs(tc.args)
		cmd.SetIn(strings.NewReader(""))
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		err := cmd.Execute()
		if code, ok := err.(ExitCode); !ok || code != ExitUnusable || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), tc.want) {
			t.Errorf("%q: err %v, stdout %q, stderr %q; want exit 2 and %q", tc.args, err, stdout.String(), stderr.String(), tc.want)
		}
	}
}
