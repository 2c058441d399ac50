package agent

import (
	"os"
	"strconv"
	"strings"
	"time"
)

func (a *Agent) applied(d desire, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.have = d
	a.haveGen = gen
	a.unknown = false
	a.status = Status{Bound: d.bound, Port: d.port, Final: a.final && !d.bound, At: time.Now()}
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *Agent) setErr(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status.Err = msg
	close(a.changed)
	a.changed = make(chan struct{})
}

// Reason is why the runtime is not binding: what the probes found that a person must act
// on (a TLS UI the runtime was not configured for, a filter without a credential, a failing
// REST API, a UI it cannot prove). Since is when that reason was first seen; it is kept
// across probes saying the same, so Events can be hung on it (one per new reason).
type Reason struct {
	Msg   string
	Since time.Time
}

// Reason returns the current reason the runtime is not binding ("" once bound).
func (a *Agent) Reason() Reason {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reason
}

// setReason records why the runtime does not bind; the termination message follows.
func (a *Agent) setReason(msg string) {
	a.mu.Lock()
	if a.reason.Msg == msg {
		a.mu.Unlock()
		return
	}
	a.reason = Reason{Msg: msg, Since: time.Now()}
	a.mu.Unlock()
	a.writeTermination()
	a.poke() // the waiting state follows (waiting.go)
}

// clearReason forgets the reason once the UI is bound.
func (a *Agent) clearReason() {
	a.mu.Lock()
	had := a.reason.Msg != ""
	a.reason = Reason{}
	a.mu.Unlock()
	if had {
		a.writeTermination()
	}
}

// fatal records an error a person must act on (the API server refusing writes, the control
// socket): error log and the termination log.
func (a *Agent) fatal(msg string) {
	a.mu.Lock()
	same := a.fatalMsg == msg
	a.fatalMsg = msg
	a.mu.Unlock()
	if !same {
		a.writeTermination()
	}
}

// clearFatal forgets the error once writes work again.
func (a *Agent) clearFatal() {
	a.mu.Lock()
	had := a.fatalMsg != ""
	a.fatalMsg = ""
	a.mu.Unlock()
	if had {
		a.writeTermination()
	}
}

// writeTermination writes the termination message (what `kubectl describe pod` shows as the
// container's last state message): the error, then the reason the UI is not bound.
func (a *Agent) writeTermination() {
	if a.cfg.TerminationLog == "" {
		return
	}
	a.mu.Lock()
	var b strings.Builder
	for _, m := range []string{a.cfg.TerminationNotice, a.fatalMsg, a.reason.Msg} {
		if m != "" {
			b.WriteString(m + "\n")
		}
	}
	a.mu.Unlock()
	if err := os.WriteFile(a.cfg.TerminationLog, []byte(b.String()), 0o644); err != nil {
		a.log.Debug("cannot write the termination log", "path", a.cfg.TerminationLog, "err", err)
	}
}

func (a *Agent) readState() int {
	if a.cfg.StateFile == "" {
		return 0
	}
	b, err := os.ReadFile(a.cfg.StateFile)
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || p <= 0 || p > 65535 {
		return 0
	}
	return p
}

func (a *Agent) writeState(d desire) {
	if a.cfg.StateFile == "" {
		return
	}
	if !d.bound {
		_ = os.Remove(a.cfg.StateFile)
		return
	}
	tmp := a.cfg.StateFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(d.port)+"\n"), 0o644); err == nil {
		_ = os.Rename(tmp, a.cfg.StateFile)
	}
}
