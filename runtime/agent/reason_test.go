package agent

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/runtime/discover"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// What the probes found that keeps the UI unbound reaches the termination message with its
// port, next to an API error, and leaves it once the UI is bound; the reason's Since stays
// while the same reason holds (issue 31, item 4: TLS it cannot verify, a failing REST API).
func TestReasonInTerminationMessage(t *testing.T) {
	term := filepath.Join(t.TempDir(), "termination-log")
	a := &Agent{cfg: Config{TerminationLog: term}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), said: map[string]bool{}}
	read := func() string {
		b, _ := os.ReadFile(term)
		return string(b)
	}
	a.onVerdict(discover.Socket{Port: 4040}, sparkapi.Result{Verdict: sparkapi.StartingUp, Detail: "Spark is starting up"})
	if got := read(); got != "" || a.Reason().Msg != "" {
		t.Errorf("starting up is no reason: %q %q", got, a.Reason().Msg)
	}
	a.onVerdict(discover.Socket{Port: 4040}, sparkapi.Result{Verdict: sparkapi.TLSMismatch, Detail: "redirects to https://10.0.0.1:4440/api/v1/applications"})
	want := "port 4040: TLS the runtime cannot verify; not bound: redirects to https://10.0.0.1:4440/api/v1/applications\n"
	if got := read(); got != want {
		t.Errorf("termination message %q, want %q", got, want)
	}
	since := a.Reason().Since
	a.onVerdict(discover.Socket{Port: 4040}, sparkapi.Result{Verdict: sparkapi.TLSMismatch, Detail: "redirects to https://10.0.0.1:4440/api/v1/applications"})
	if a.Reason().Since != since {
		t.Error("the same reason again moved its Since")
	}
	a.fatal("PATCH services/ui: 403 Forbidden")
	if got := read(); got != "PATCH services/ui: 403 Forbidden\n"+want {
		t.Errorf("with an API error: %q", got)
	}
	a.onVerdict(discover.Socket{Port: 4041}, sparkapi.Result{Verdict: sparkapi.Failing, Detail: "Spark's REST API /api/v1/applications answers 500 Internal Server Error"})
	if got := read(); !strings.Contains(got, "port 4041: Spark's REST API keeps failing") || strings.Contains(got, "4040") {
		t.Errorf("a new reason replaces the old: %q", got)
	}
	a.clearFatal()
	a.clearReason()
	if got := read(); got != "" {
		t.Errorf("bound, the termination message is still %q", got)
	}
}

// The skew notice (settings this runtime ignored) stays first in the termination message
// through every reason the agent writes and clears: TestSkew once read it empty after a bind.
func TestTerminationNoticeKept(t *testing.T) {
	term := filepath.Join(t.TempDir(), "termination-log")
	const notice = "ignoring settings this runtime (contract 1.2) does not know: flags --later"
	a := &Agent{cfg: Config{TerminationLog: term, TerminationNotice: notice}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), said: map[string]bool{}}
	a.onVerdict(discover.Socket{Port: 4040}, sparkapi.Result{Verdict: sparkapi.TLSMismatch, Detail: "redirects to https://10.0.0.1:4440/"})
	a.fatal("PATCH services/ui: 403 Forbidden")
	a.clearFatal()
	a.clearReason()
	if b, _ := os.ReadFile(term); string(b) != notice+"\n" {
		t.Errorf("after the bind cleared every reason the termination message is %q, want the notice alone", b)
	}
}
