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

// fatal records a reason a person must act on: error log and the termination log.
func (a *Agent) fatal(msg string) {
	a.mu.Lock()
	same := a.fatalMsg == msg
	a.fatalMsg = msg
	a.mu.Unlock()
	if same || a.cfg.TerminationLog == "" {
		return
	}
	if err := os.WriteFile(a.cfg.TerminationLog, []byte(msg+"\n"), 0o644); err != nil {
		a.log.Debug("cannot write the termination log", "path", a.cfg.TerminationLog, "err", err)
	}
}

// clearFatal empties the termination log once things work again.
func (a *Agent) clearFatal() {
	a.mu.Lock()
	had := a.fatalMsg != ""
	a.fatalMsg = ""
	a.mu.Unlock()
	if had && a.cfg.TerminationLog != "" {
		_ = os.WriteFile(a.cfg.TerminationLog, nil, 0o644)
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
