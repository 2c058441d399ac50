package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/binder"
)

// DefaultWaitingInterval is the least time between two waiting writes of one runtime, and
// before its first (docs/service-status.md). A driver's UI is usually up and bound well within
// it, so an application that binds normally costs no request for the waiting state; one that
// cannot bind costs one request per change of reason, never more than one per interval
// however its reasons flap: O(1) requests per application, which is what issue 33 measures.
const DefaultWaitingInterval = 30 * time.Second

// waitingReport is the reconcile loop's memory of the waiting state it wrote.
type waitingReport struct {
	last    time.Time // the last attempt; the agent's start before the first
	settled string    // the reason written, or found unwritable (routed): tried again only once it changes
	said    bool      // "left alone" logged
}

// waitingReason is the ui-reason the Service should say while this runtime waits, false
// when it must say nothing: the Pod is ending, or this process (or an earlier run of its
// container, by the state file) bound the Service, whose state is then the bind's or the
// withdrawal's and never "waiting" again.
func (a *Agent) waitingReason() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.final || a.everBound {
		return "", false
	}
	if a.reason.Msg != "" {
		return binder.OneLine(a.reason.Msg), true
	}
	// No probe verdict a person must act on: nothing listens yet, or what listens is not
	// (yet) a live UI of this application. One stable reason, so that sockets coming and
	// going cost no request.
	return "no live Spark UI found yet (ports: " + a.portsDesc() + ")", true
}

// reportWaiting writes the waiting state when its reason changed and the interval allows,
// and returns how long the loop may sleep before it has something to write (forever: only a
// kick, a new reason or a new state, wakes it). Called by the reconcile loop only when the
// Service is as wanted and not bound, so it never delays a bind: the bind's kick cancels a
// waiting write in flight, and the guards refuse a waiting write that reaches the API server
// after a bind.
func (a *Agent) reportWaiting(ctx context.Context, wr *waitingReport, w wanted) time.Duration {
	reason, ok := a.waitingReason()
	if !ok || w.gen == 0 || w.want.bound || w.have.bound || reason == wr.settled {
		return forever
	}
	if d := time.Until(wr.last.Add(a.cfg.WaitingInterval)); d > 0 {
		return d
	}
	wr.last = time.Now()
	opCtx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	a.mu.Lock()
	if a.wantGen != w.gen {
		a.mu.Unlock()
		return 0 // superseded: the loop writes the new state first
	}
	a.cancelOp = cancel
	a.mu.Unlock()
	st := binder.State{State: names.UIStateWaiting, Since: a.start, Pod: a.cfg.PodName, Reason: reason}
	got, err := a.client.Waiting(opCtx, st)
	a.mu.Lock()
	a.cancelOp = nil
	a.mu.Unlock()
	switch {
	case err != nil:
		if ctx.Err() == nil && opCtx.Err() != context.Canceled {
			var f *binder.Failure
			msg := err.Error()
			if errors.As(err, &f) {
				msg = f.Message
			}
			a.log.Warn("cannot write the waiting state on the UI Service; tried again after the interval", "err", msg,
				"retry_in", a.cfg.WaitingInterval)
		}
	case got == binder.WaitingWritten:
		wr.settled = reason
		a.log.Info("UI Service marked waiting", "service", a.cfg.Service, "reason", reason)
	case got == binder.Routed:
		wr.settled = reason
		if !wr.said {
			a.log.Info("waiting state not written: the UI Service is bound or handed off by another Pod (or is not this application's); left alone",
				"service", a.cfg.Service, "reason", reason)
			wr.said = true
		}
	case got == binder.NoService:
		a.log.Debug(fmt.Sprintf("waiting state not written: Service %s/%s does not exist (yet)", a.cfg.PodNamespace, a.cfg.Service))
	}
	return 0
}

// poke wakes the reconcile loop without changing what is wanted (a new waiting reason).
func (a *Agent) poke() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}
