package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

func TestCommandLine(t *testing.T) {
	out, err := exec.Command(binary, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "sparkui-runtime ") {
		t.Errorf("--version: %v %q", err, out)
	}
	for _, args := range [][]string{{}, {"nope"}, {"withdraw", "--timeout=0s"},
		{"wait-uri"}, {"wait-uri", "--service=s", "--timeout=0s"}, {"wait-uri", "--service=s", "extra"}} {
		err := exec.Command(binary, args...).Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != verb.ExitUsage {
			t.Errorf("%q: %v, want exit %d", args, err, verb.ExitUsage)
		}
	}
	// run's configuration errors: it says why, writes the termination log, and waits for
	// SIGTERM instead of exiting into a restart loop; then exits 0 (an exit code > 0 of a
	// native sidecar marks an Apache-operator application Failed).
	dir := t.TempDir()
	termLog := filepath.Join(dir, "termination-log")
	noPod := []string{"POD_NAME=", "POD_NAMESPACE=", "POD_UID="}
	pod := []string{"POD_NAME=p", "POD_NAMESPACE=n", "POD_UID=u", "HOST_IP="}
	for _, c := range []struct {
		env  []string
		args []string
		want string // in the termination log
	}{
		{noPod, []string{"--service=s", "--app-id=a"}, "$POD_UID is required"},
		{pod, []string{"--service=s", "--app-id=a", "--external-uri=nodePort"}, "--external-uri=nodePort needs $HOST_IP"},
		// A flag of a newer function (version skew), a bad value, a bad environment variable.
		// A flag of a newer contract that must not be ignored (verb.RequiredFlagPrefix): refused
		// with the reason; one that may be ignored is TestSkew's.
		{pod, []string{"--service=s", "--app-id=a", "--require-no-such-flag=x"}, "not binding the UI Service: the settings --require-no-such-flag belong to a runtime contract newer than this runtime's"},
		{append(pod, "SPARKUI_REQUIRE_STRICTER=1"), []string{"--service=s", "--app-id=a"}, "the settings SPARKUI_REQUIRE_STRICTER belong to a runtime contract newer"},
		{pod, []string{"--service=s", "--app-id=a", "--log-format=xml"}, `invalid arguments: --log-format: "xml" is neither text nor json`},
		{append(pod, "SPARKUI_MAX_RETRIES=many"), []string{"--service=s", "--app-id=a"}, "invalid environment: $SPARKUI_MAX_RETRIES"},
		// The app id may be empty only with a guard label; then a selector is needed.
		{pod, []string{"--service=s"}, "--app-id is required (unless --guard-label is given)"},
		{pod, []string{"--service=s", "--guard-label=sparkui.dev/application=nightly"}, "no --selector and an empty --app-id ($SPARKUI_APP_ID)"},
		{pod, []string{"--service=s", "--guard-label=sparkui.dev/application="}, "--guard-label: sparkui.dev/application= has an empty key or value"},
		// A poll that would spin, or silently run at 100ms while the log says 0s; a port named
		// with its flag.
		{pod, []string{"--service=s", "--app-id=a", "--poll-interval=1ns"}, "invalid configuration: --poll-interval 1ns: must be at least 10ms"},
		{pod, []string{"--service=s", "--app-id=a", "--poll-interval=0s"}, "invalid configuration: --poll-interval 0s: must be at least 10ms"},
		{pod, []string{"--service=s", "--app-id=a", "--poll-interval=-5ms"}, "invalid configuration: --poll-interval -5ms: must be at least 10ms"},
		{pod, []string{"--service=s", "--app-id=a", "--ui-port=80"}, "invalid configuration: --ui-port 80: Spark accepts 0 (random) or 1024-65535"},
	} {
		// The termination log first: flags after a bad one are not parsed (in a Pod it is
		// the default, /dev/termination-log).
		args := append([]string{"run", "--termination-log=" + termLog, "--socket=", "--install="}, c.args...)
		_ = os.Remove(termLog)
		p := startProc(t, c.env, args...)
		testcluster.WaitFor(t, 5*time.Second, fmt.Sprintf("%q: the termination log to say %q", c.args, c.want), func() (bool, string) {
			b, _ := os.ReadFile(termLog)
			return strings.Contains(string(b), c.want), string(b)
		})
		select {
		case <-p.done:
			t.Fatalf("%q: exited on a configuration error: %s", c.args, p.out.String())
		default:
		}
		if code := p.sigterm(t, 5*time.Second); code != verb.ExitOK {
			t.Errorf("%q: exit code %d after SIGTERM, want 0", c.args, code)
		}
	}
}
