package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/runtime/redirectcmd"
	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/runtime/waituricmd"
)

//go:generate env UPDATE_GOLDEN=1 go test -count=1 -run ^TestCLIDoc$ .

// runBinary runs the built binary and returns its exit code, stdout and stderr.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// TestCLIDoc: docs/cli.md's sparkui-runtime section is exactly what the built binary's
// --help prints, for the root and every verb; UPDATE_GOLDEN=1 (make generate) rewrites it.
func TestCLIDoc(t *testing.T) {
	var doc strings.Builder
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"withdraw", "--help"}, {waituricmd.Command, "--help"}, {redirectcmd.Command, "--help"}} {
		code, stdout, stderr := runBinary(t, args...)
		if code != verb.ExitOK || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		doc.WriteString(cli.DocHelp("sparkui-runtime "+strings.Join(args, " "), stdout))
	}
	const path = "../docs/cli.md"
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := cli.WriteSection(path, "sparkui-runtime", doc.String()); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := cli.Section(path, "sparkui-runtime")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(doc.String(), got); d != "" {
		t.Errorf("docs/cli.md is stale: run make generate (-help +doc):\n%s", d)
	}
}

// TestCLIStyle: every verb answers -h, -help and --help alike (stdout, exit 0) with its
// invocation forms, examples and exit statuses; a bad flag is one line naming it with two
// dashes (exit 2); wait-uri's help lists every exit status it uses, 6 included.
func TestCLIStyle(t *testing.T) {
	for _, v := range []string{"", "withdraw", waituricmd.Command, redirectcmd.Command, "run"} {
		var first string
		for _, h := range []string{"-h", "-help", "--help"} {
			args := []string{h}
			if v != "" {
				args = []string{v, h}
			}
			code, stdout, stderr := runBinary(t, args...)
			if code != verb.ExitOK || stderr != "" || !strings.Contains(stdout, "Usage:\n  sparkui-runtime "+v) ||
				!strings.Contains(stdout, "\nExamples:\n") || !strings.Contains(stdout, "\nExit status:\n") {
				t.Errorf("%v: exit %d, stderr %q, help:\n%s", args, code, stderr, stdout)
			}
			if first == "" {
				first = stdout
			} else if stdout != first {
				t.Errorf("%v: differs from -h", args)
			}
		}
		if v == "" || v == "run" {
			continue // run logs a bad flag and waits for SIGTERM (TestCommandLine)
		}
		code, stdout, stderr := runBinary(t, v, "-no-such-flag")
		want := "sparkui-runtime " + v + ": unknown flag --no-such-flag (--help lists the flags)\n"
		if code != verb.ExitUsage || stdout != "" || stderr != want {
			t.Errorf("%s -no-such-flag: exit %d, stdout %q, stderr %q; want exit 2 and %q", v, code, stdout, stderr, want)
		}
	}
	_, help, _ := runBinary(t, waituricmd.Command, "--help")
	for _, code := range []string{"0", "1", "2", "4", "5", "6"} {
		if !strings.Contains(help, "\n  "+code+"  ") {
			t.Errorf("wait-uri --help lacks exit status %s:\n%s", code, help)
		}
	}
	code, _, stderr := runBinary(t, "nope")
	if code != verb.ExitUsage || stderr != "sparkui-runtime: unknown command \"nope\" (--help lists the commands)\n" {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
}

// TestSingleDashFlags: the spellings Pod specs may carry keep parsing: the function writes
// --flag=value; hand-written specs may say -flag=value or -flag value.
func TestSingleDashFlags(t *testing.T) {
	for _, args := range [][]string{
		{waituricmd.Command, "-service=s", "-timeout=0s"},
		{waituricmd.Command, "-service", "s", "-timeout", "0s"},
		{waituricmd.Command, "--service=s", "--timeout=0s"},
	} {
		// A zero timeout is refused after parsing: proof that the flags before it parsed.
		code, _, stderr := runBinary(t, args...)
		if code != verb.ExitUsage || !strings.Contains(stderr, "a positive --timeout") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
