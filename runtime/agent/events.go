package agent

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/runtime/events"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// eventsFlush bounds how long the end of Run waits for the last Events to reach the API
// server: Run ends on SIGTERM, inside the Pod's grace period, after the withdrawal.
const eventsFlush = 2 * time.Second

// started is when this process started, for Bound's "seconds since the runtime started".
var started = time.Now()

// newEvents is the Events recorder, nil with --events=false.
func newEvents(cfg Config, restCfg *rest.Config, log *slog.Logger) (*events.Recorder, error) {
	if cfg.NoEvents {
		return nil, nil
	}
	return events.New(restCfg, events.Identity{Namespace: cfg.PodNamespace, PodName: cfg.PodName, PodUID: cfg.PodUID, Service: cfg.Service}, started, log)
}

// verdictReasons are the Events' reasons for what onVerdict reports.
var verdictReasons = map[sparkapi.Verdict]string{
	sparkapi.Denied:      events.ReasonUIAuthRequired,
	sparkapi.Unproven:    events.ReasonUIUnproven,
	sparkapi.TLSMismatch: events.ReasonUITLSUnverified,
	sparkapi.Failing:     events.ReasonUIAPIFailing,
}

// eventWritten records an acknowledged bind, withdrawal or hand-off (after the API server
// answered: recording never delays the write).
func (a *Agent) eventWritten(want desire, outcome binder.Withdrawal, h binder.Handoff) {
	switch {
	case want.bound:
		a.events.Normal(events.ReasonBound, "Bind", fmt.Sprintf("UI Service %s bound to port %d, %d s after the runtime started (%s)",
			a.cfg.Service, want.port, a.events.Since(), want.reason))
	case outcome != binder.Withdrawn:
		// Not this Pod's binding, or no Service: nothing was withdrawn.
	case h.URI != "":
		a.events.Normal(events.ReasonHandedOff, "HandOff", fmt.Sprintf("UI Service %s handed off to the History Server: %s (%s)", a.cfg.Service, h.URI, want.reason))
	default:
		a.events.Normal(events.ReasonWithdrawn, "Withdraw", fmt.Sprintf("UI Service %s withdrawn (%s)", a.cfg.Service, want.reason))
	}
}

// eventFailed records a write failure a person must act on.
func (a *Agent) eventFailed(f *binder.Failure, msg string) {
	switch f.Kind {
	case binder.Transient:
	case binder.NotOurs:
		a.events.Warning(events.ReasonGuardRefused, "Bind", msg)
	default:
		a.events.Warning(events.ReasonServiceWriteFailed, "Bind", msg)
	}
}

// notAcknowledged records a withdrawal the API server did not acknowledge in time, and
// returns err.
func (a *Agent) notAcknowledged(err error) error {
	if err != nil {
		a.events.Warning(events.ReasonWithdrawalNotAcknowledged, "Withdraw", fmt.Sprintf("UI Service %s: %v", a.cfg.Service, err))
	}
	return err
}

func (a *Agent) setVerdictReason(v sparkapi.Verdict) {
	a.mu.Lock()
	a.verdictReason = verdictReasons[v]
	a.mu.Unlock()
}

// eventWaiting records, each time the runtime logs that it is still waiting for the UI (every
// --wait-log-interval), why the UI is not bound: the verdict that keeps it unbound, or no
// listening UI at all. Repeats are one Event whose series counts them (client-go).
func (a *Agent) eventWaiting() {
	r := a.Reason()
	a.mu.Lock()
	reason := a.verdictReason
	a.mu.Unlock()
	if r.Msg == "" || reason == "" {
		a.events.Warning(events.ReasonUINotFound, "Probe", fmt.Sprintf("no Spark UI of this application listening on %s, %d s after the runtime started; seen: %s",
			a.portsDesc(), a.events.Since(), a.finder.Summary()))
		return
	}
	a.events.Warning(reason, "Probe", fmt.Sprintf("UI not bound since %s: %s", r.Since.UTC().Format(time.RFC3339), r.Msg))
}
