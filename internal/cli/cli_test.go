package cli

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// TestParseGo: the flag package's errors come out with the double-dash spelling, --help
// renders the flags sorted with their defaults, and single-dash flags still parse.
func TestParseGo(t *testing.T) {
	c := Command{Path: "x y", Short: "does y", Usage: []string{"x y --name=N"}, Exit: []Exit{{Code: 0, Meaning: "fine"}}}
	newFS := func() (*flag.FlagSet, *string, *time.Duration) {
		fs := flag.NewFlagSet("x y", flag.ContinueOnError)
		name := fs.String("name", "", "the `NAME` to use")
		d := fs.Duration("timeout", 5*time.Second, "give up after this long")
		fs.Bool("tls", false, "serve HTTPS")
		return fs, name, d
	}
	for _, tc := range []struct {
		args           []string
		code           int
		ok             bool
		stdout, stderr string
	}{
		{[]string{"-name=a", "-timeout", "1s"}, 0, true, "", ""},
		{[]string{"--name", "a"}, 0, true, "", ""},
		{[]string{"--nope"}, 2, false, "", "x y: unknown flag --nope (--help lists the flags)\n"},
		{[]string{"-name"}, 2, false, "", "x y: flag --name needs a value (--help lists the flags)\n"},
		{[]string{"--timeout=soon"}, 2, false, "", "x y: invalid value \"soon\" for flag --timeout: parse error (--help lists the flags)\n"},
		{[]string{"--help"}, 0, false, "x y: does y\n\nUsage:\n  x y --name=N\n\nFlags:\n" +
			"      --name NAME         the NAME to use\n" +
			"      --timeout DURATION  give up after this long (default 5s)\n" +
			"      --tls               serve HTTPS\n" +
			"  -h, --help              print this help and exit 0\n\nExit status:\n  0  fine\n", ""},
	} {
		fs, name, _ := newFS()
		var stdout, stderr strings.Builder
		code, ok := ParseGo(fs, c, tc.args, &stdout, &stderr)
		if code != tc.code || ok != tc.ok || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
			t.Errorf("%q: code %d ok %v\nstdout %q\nstderr %q\nwant %d %v\n%q\n%q", tc.args, code, ok, stdout.String(), stderr.String(), tc.code, tc.ok, tc.stdout, tc.stderr)
		}
		if tc.ok && *name != "a" {
			t.Errorf("%q: name %q", tc.args, *name)
		}
	}
}
