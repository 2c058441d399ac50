package runcmd

import (
	"flag"
	"io"
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
