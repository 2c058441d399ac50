package runcmd

import (
	"flag"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/verb"
)

func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func TestEnvAndSelector(t *testing.T) {
	// The shared-Service settings from the environment: $SPARKUI_APP_ID is how the function
	// passes the id (downward API), the others follow the same rule.
	t.Setenv(sidecar.EnvAppID, "spark-5e1f")
	t.Setenv("SPARKUI_OWNER_REFERENCE", "false")
	t.Setenv("SPARKUI_GUARD_LABEL", "sparkui.dev/application=nightly")
	t.Setenv("SPARKUI_SELECTOR", "spark-app-selector=spark-5e1f,spark-role=driver")
	fs := newFlagSet()
	f := newRunFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := verb.EnvDefaults(fs); err != nil {
		t.Fatal(err)
	}
	if c := f.cfg.Config; c.AppID != "spark-5e1f" || !c.NoOwnerReference || c.GuardLabel != "sparkui.dev/application=nightly" ||
		c.PodSelector != "spark-app-selector=spark-5e1f,spark-role=driver" {
		t.Errorf("from the environment: %+v", c)
	}
	t.Setenv("SPARKUI_POLL_INTERVAL", "250ms")
	t.Setenv("SPARKUI_SERVICE", "from-env")
	fs = newFlagSet()
	f = newRunFlags(fs)
	if err := fs.Parse([]string{"--service=from-flag"}); err != nil {
		t.Fatal(err)
	}
	if err := verb.EnvDefaults(fs); err != nil {
		t.Fatal(err)
	}
	if f.cfg.Poll != 250*time.Millisecond || f.cfg.Service != "from-flag" {
		t.Errorf("poll %s service %q", f.cfg.Poll, f.cfg.Service)
	}
	t.Setenv("SPARKUI_MAX_RETRIES", "many")
	fs = newFlagSet()
	newRunFlags(fs)
	_ = fs.Parse(nil)
	if err := verb.EnvDefaults(fs); err == nil || !strings.Contains(err.Error(), "SPARKUI_MAX_RETRIES") {
		t.Errorf("bad env value: %v", err)
	}
}

// TestSkewMessages: what the runtime writes to its termination message (kubectl describe pod,
// the container status) about settings of a newer contract names them, this runtime's
// contract and the image to upgrade runtime.image to.
func TestSkewMessages(t *testing.T) {
	t.Setenv("SPARKUI_FROM_A_NEWER_CONTRACT", "1")
	fs := newFlagSet()
	newRunFlags(fs)
	args, skew := verb.SplitFlags(fs, []string{"--service=s", "--from-a-newer-contract=false", "--ui-port=4040"})
	if strings.Join(args, " ") != "--service=s --ui-port=4040" {
		t.Errorf("args left for parsing: %q", args)
	}
	skew = verb.UnknownEnv(skew, fs, []string{"SPARKUI_FROM_A_NEWER_CONTRACT=1", "SPARKUI_SERVICE=s"})
	term := t.TempDir() + "/termination-log"
	reportSkew(slog.New(slog.NewTextHandler(io.Discard, nil)), term, skew)
	b, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	want := "ignoring settings this runtime (contract 1.2) does not know: flags --from-a-newer-contract; environment SPARKUI_FROM_A_NEWER_CONTRACT; " +
		"they belong to a newer runtime contract and are safe to ignore, so the UI Service is bound all the same, without what they add; " +
		"upgrade runtime.image (sparkui-fn's functionConfig) to ghcr.io/sparkui/sparkui-runtime:contract-1.3 or newer: the image of the contract the function writes for, its default runtime.image (docs/runtime-contract.md)\n"
	if string(b) != want {
		t.Errorf("termination log:\n%s\nwant:\n%s", b, want)
	}
	_, skew = verb.SplitFlags(fs, []string{"--require-strict-identity=true"})
	if got := refusal(skew); !strings.Contains(got, "not binding the UI Service: the settings --require-strict-identity belong to a runtime contract newer than this runtime's (1.2) and must not be ignored; upgrade runtime.image (sparkui-fn's functionConfig) to ghcr.io/sparkui/sparkui-runtime:contract-1.3 or newer") {
		t.Errorf("refusal: %s", got)
	}
}
