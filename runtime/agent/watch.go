package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sparkui/sparkui/runtime/discover"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// watch finds the UI and follows it.
func (a *Agent) watch(ctx context.Context) {
	t := time.NewTicker(a.cfg.Poll)
	defer t.Stop()
	var bound *discover.Socket
	first := true
	lastWaitLog := time.Now()
	tableErrLogged := false
	for {
		a.mu.Lock()
		final := a.final
		a.mu.Unlock()
		if final {
			return
		}
		if bound != nil {
			still, err := a.finder.Source().StillListening(*bound)
			if err != nil {
				// Cannot read the table: ask the UI itself (costs one request per poll).
				if !tableErrLogged {
					a.log.Warn("cannot read the socket table, watching over HTTP", "err", err)
					tableErrLogged = true
				}
				still = a.probeAny(ctx, *bound)
			}
			if !still {
				a.log.Info("UI lost: its socket is no longer listening", "socket", bound.String())
				a.finder.Forget(bound.Inode)
				bound = nil
				a.setWant(desire{reason: "UI lost"})
				lastWaitLog = time.Now()
			}
		}
		if bound == nil {
			sock, found, err := a.finder.Pass(ctx)
			switch {
			case err != nil:
				if !tableErrLogged || time.Since(lastWaitLog) > a.cfg.WaitLog {
					a.log.Error("cannot read the listening sockets", "err", err)
					tableErrLogged, lastWaitLog = true, time.Now()
				}
			case found:
				a.log.Info("UI found", "socket", sock.String(), "scheme", a.prober.Scheme())
				if m := a.finder.Matches(); len(m) > 1 {
					var rest []string
					for _, s := range m[1:] {
						rest = append(rest, s.String())
					}
					a.log.Warn("several live Spark UIs in this Pod (several SparkContexts?): binding the first Spark started, not the others",
						"bound", sock.String(), "not_bound", strings.Join(rest, ", "))
				}
				bound = &sock
				if id := a.finder.AppID(sock); id != "" {
					a.mu.Lock()
					a.verifiedID = id
					a.mu.Unlock()
				}
				a.clearReason()
				a.setWant(desire{bound: true, port: sock.Port, reason: "UI found"})
			default:
				if first {
					a.setWant(desire{reason: "no UI at start"})
				}
				if time.Since(lastWaitLog) >= a.cfg.WaitLog {
					args := []any{"ports", a.portsDesc(), "seen", a.finder.Summary()}
					if r := a.Reason(); r.Msg != "" {
						args = append(args, "reason", r.Msg, "since", r.Since.Format(time.RFC3339))
					}
					a.log.Info("still waiting for the UI", args...)
					a.eventWaiting()
					lastWaitLog = time.Now()
				}
			}
			first = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Agent) probeAny(ctx context.Context, s discover.Socket) bool {
	for _, addr := range s.DialAddrs() {
		r := a.prober.Probe(ctx, addr)
		if r.Verdict == sparkapi.Match {
			return true
		}
		if !r.Unreachable() {
			return false
		}
	}
	return false
}

func (a *Agent) portsDesc() string {
	ports := a.cfg.Ports()
	if ports == nil {
		return "random (every listening socket)"
	}
	return discover.PortsString(ports)
}

// onVerdict reports, once each, what a person must act on among the verdicts, in the log and
// as the reason the UI is not bound (the termination message): a UI behind an authentication
// filter (never bound without a credential), a UI whose TLS the runtime was not configured
// for or cannot pass, a REST API that keeps failing, and, under hostNetwork, a live UI whose
// identity cannot be proven.
func (a *Agent) onVerdict(s discover.Socket, r sparkapi.Result) {
	var msg string
	switch r.Verdict {
	case sparkapi.Denied:
		msg = "the UI refuses the runtime's probes; not bound: " + r.Detail
	case sparkapi.Unproven:
		msg = "a live Spark UI whose identity cannot be proven under hostNetwork; not bound: " + r.Detail
	case sparkapi.TLSMismatch:
		msg = "TLS the runtime cannot verify; not bound: " + r.Detail
	case sparkapi.Failing:
		msg = "Spark's REST API keeps failing; not bound until it answers: " + r.Detail
	default:
		return
	}
	a.setReason(fmt.Sprintf("port %d: %s", s.Port, msg))
	a.setVerdictReason(r.Verdict)
	a.mu.Lock()
	said := a.said[msg]
	a.said[msg] = true
	a.mu.Unlock()
	if said {
		return
	}
	a.log.Warn(msg, "port", s.Port)
}
