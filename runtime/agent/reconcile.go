package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/binder"
)

// retrying is the reconcile loop's memory of failed writes: the backoffs running, the
// current 404 streak and the last failure logged (a repeated one is logged every WaitLog).
type retrying struct {
	transient, fatal wait.Backoff
	notFound         time.Time // first 404 of the current streak
	lastMsg          string
	lastLogged       time.Time
}

func (a *Agent) newRetrying() retrying {
	return retrying{transient: a.cfg.Backoff, fatal: a.cfg.FatalBackoff}
}

// wanted is one consistent read of what is wanted and what was last acknowledged.
type wanted struct {
	want, have   desire
	gen, haveGen uint64
	unknown      bool
}

func (a *Agent) snapshot() wanted {
	select { // a kick from before this read is already accounted for
	case <-a.kick:
	default:
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return wanted{want: a.want, have: a.have, gen: a.wantGen, haveGen: a.haveGen, unknown: a.unknown}
}

// reconcile makes the Service match want.
func (a *Agent) reconcile(ctx context.Context) {
	retry := a.newRetrying()
	var pub publishing
	wr := waitingReport{last: a.start}
	for {
		w := a.snapshot()
		if w.gen != 0 && w.haveGen == w.gen && w.have.bound && a.uri != nil && (pub.gen != w.gen || !pub.finished) {
			// Bound, and the external URI of this binding not published yet.
			if !a.publish(ctx, &pub, w.gen) {
				return
			}
			continue
		}
		if w.gen == 0 || w.haveGen == w.gen {
			if !a.sleepOrKick(ctx, a.reportWaiting(ctx, &wr, w)) {
				return
			}
			continue
		}
		if w.want.same(w.have) && !w.unknown {
			a.applied(w.want, w.gen) // already so: nothing to write
			continue
		}
		start := time.Now()
		outcome, h, attempted, superseded, err := a.write(ctx, w.want, w.gen)
		switch {
		case !attempted:
			continue // changed meanwhile
		case err == nil:
			retry = a.newRetrying()
			a.written(w.want, w.gen, outcome, h, time.Since(start).Round(time.Millisecond))
			continue
		case ctx.Err() != nil:
			return
		case superseded:
			continue // what is wanted changed: write the new state at once
		}
		if !a.sleepOrKick(ctx, a.failed(ctx, &retry, err)) {
			return
		}
	}
}

// publish takes one step of publishing binding gen's external URI and waits as that step
// asks; false when ctx ended.
func (a *Agent) publish(ctx context.Context, pub *publishing, gen uint64) bool {
	if pub.gen != gen {
		*pub = publishing{gen: gen, poll: a.cfg.URIPoll, backoff: a.cfg.Backoff}
	}
	delay, finished := a.publishStep(ctx, pub)
	if finished {
		pub.finished = true
		return true
	}
	return a.sleepOrKick(ctx, delay)
}

// write binds or withdraws the Service as want says, cancellable by the next change of want.
// attempted is false when want changed before the request started; superseded when it
// changed while the request ran.
func (a *Agent) write(ctx context.Context, want desire, gen uint64) (outcome binder.Withdrawal, h binder.Handoff, attempted, superseded bool, err error) {
	opCtx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	a.mu.Lock()
	if a.wantGen != gen { // changed meanwhile
		a.mu.Unlock()
		return outcome, h, false, false, nil
	}
	a.cancelOp = cancel
	a.mu.Unlock()
	// The status annotations travel in the same patch (docs/service-status.md): what they
	// say is true exactly when the API server applied the change they describe.
	st := binder.State{State: names.UIStateBound, Since: time.Now(), Pod: a.cfg.PodName, Port: want.port}
	if want.bound {
		err = a.client.BindWith(opCtx, want.port, st)
	} else {
		h = a.handoff()
		st.State, st.Port, st.Reason = names.UIStateWithdrawn, 0, want.reason
		if h.URI != "" {
			st.State = names.UIStateHandedOff
		}
		outcome, err = a.client.WithdrawWith(opCtx, h, st)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cancelOp = nil
	if err != nil {
		// A failed or cancelled write may still have been applied: whatever is wanted
		// next must be written, even if it equals what was last acknowledged.
		a.unknown = true
	}
	return outcome, h, true, a.wantGen != gen, err
}

// written logs an acknowledged write, records it and marks it applied.
func (a *Agent) written(want desire, gen uint64, outcome binder.Withdrawal, h binder.Handoff, took time.Duration) {
	switch {
	case want.bound:
		a.log.Info("UI Service bound", "service", a.cfg.Service, "port", want.port, "selector", a.cfg.Selector,
			"reason", want.reason, "took", took)
	case outcome == binder.NotHeld:
		// Nothing of this Pod's is routed: done, and the Service is left to whoever holds it.
		a.log.Info("UI Service not withdrawn: this Pod does not hold the binding (bound by a later Pod of the application, never bound by this one, or not this application's); left alone",
			"service", a.cfg.Service, "reason", want.reason, "took", took)
	case outcome == binder.Gone:
		a.log.Info("UI Service already gone: nothing to withdraw", "service", a.cfg.Service, "reason", want.reason, "took", took)
	case h.URI != "":
		a.log.Info("UI Service handed off to the History Server redirector", "service", a.cfg.Service,
			"selector", names.LabelHistoryRedirector+"="+names.HistoryRedirectorValue, "target_port", h.Port,
			"history_uri", h.URI, "reason", want.reason, "took", took)
	case a.cfg.HistoryURL != "":
		a.log.Info("UI Service withdrawn, not handed off to the History Server: this process verified no UI, so it cannot name the application's page",
			"service", a.cfg.Service, "selector", names.WithdrawnSelectorKey+"="+a.cfg.PodUID, "reason", want.reason, "took", took)
	default:
		a.log.Info("UI Service withdrawn", "service", a.cfg.Service, "selector", names.WithdrawnSelectorKey+"="+a.cfg.PodUID,
			"reason", want.reason, "took", took)
	}
	a.writeState(want)
	if want.bound {
		a.mu.Lock()
		a.everBound = true
		a.mu.Unlock()
	}
	a.eventWritten(want, outcome, h)
	if outcome != binder.NotHeld {
		a.clearFatal()
	}
	a.applied(want, gen)
	if !want.bound && outcome == binder.Withdrawn {
		a.mu.Lock()
		a.status.HistoryURI = h.URI
		a.mu.Unlock()
	}
}

// handoff is what a withdrawal hands the Service off to: the redirector, when a History
// Server URL is configured and this process verified the UI's application id (the id the UI
// it bound reported, which names the application's event log); else nothing (the plain
// withdrawal). A runtime restarted after its UI went away never verified one: it withdraws
// plainly rather than publish a History Server page it cannot name.
func (a *Agent) handoff() binder.Handoff {
	a.mu.Lock()
	id := a.verifiedID
	a.mu.Unlock()
	if a.cfg.HistoryURL == "" || id == "" {
		return binder.Handoff{}
	}
	return binder.Handoff{URI: sidecar.HistoryURI(a.cfg.HistoryURL, id), Port: a.cfg.RedirectorPort}
}

// failed classifies a failed write, reports it (fatal ones in the status and the termination
// log) and returns how long to wait before the next attempt.
func (a *Agent) failed(ctx context.Context, r *retrying, err error) time.Duration {
	var f *binder.Failure
	if !errors.As(err, &f) {
		f = &binder.Failure{Kind: binder.Transient, Message: err.Error(), Err: err}
	}
	var delay time.Duration
	msg := f.Message
	level := slog.LevelError
	switch f.Kind {
	case binder.Transient:
		delay = retryDelay(r.transient.Step(), err)
		a.mu.Lock()
		if a.final && !a.finalBy.IsZero() {
			delay = beforeDeadline(delay, time.Until(a.finalBy))
		}
		a.mu.Unlock()
		level = slog.LevelWarn
	case binder.NotFound:
		if r.notFound.IsZero() {
			r.notFound = time.Now()
		}
		if waited := time.Since(r.notFound); waited < a.cfg.ServiceWait {
			delay = r.transient.Step()
			msg += fmt.Sprintf(" (retrying for up to %s)", a.cfg.ServiceWait)
			level = slog.LevelWarn
		} else {
			delay = r.fatal.Step()
			msg += fmt.Sprintf(" (still missing after %s; retrying)", waited.Round(time.Second))
			a.fatal(msg)
		}
	default:
		delay = r.fatal.Step()
		a.fatal(msg)
	}
	a.setErr(msg)
	if level == slog.LevelError {
		a.eventFailed(f, msg)
	}
	if msg != r.lastMsg || time.Since(r.lastLogged) >= a.cfg.WaitLog {
		a.log.Log(ctx, level, "API request failed", "kind", f.Kind.String(), "err", msg, "retry_in", delay.Round(time.Millisecond))
		r.lastMsg, r.lastLogged = msg, time.Now()
	} else {
		a.log.Debug("API request failed", "kind", f.Kind.String(), "retry_in", delay.Round(time.Millisecond))
	}
	return delay
}

// retryDelay is the wait before retrying a transient failure: the backoff's step, but never
// less than the delay the API server asked for (a 429's or 503's Retry-After, carried in its
// Status as details.retryAfterSeconds), spread by up to half of it so that the runtimes it
// refused together do not come back together.
func retryDelay(step time.Duration, err error) time.Duration {
	if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
		if floor := time.Duration(s) * time.Second; step < floor {
			return wait.Jitter(floor, 0.5)
		}
	}
	return step
}

// beforeDeadline shortens a retry of the withdrawal for good so that it is made while someone
// still waits for it (the preStop hook's or SIGTERM's --shutdown-timeout, remaining left):
// a delay past half of what is left becomes a jittered quarter to half of it. Under a burst
// of SIGTERMs, a 429's Retry-After with its jitter (retryDelay) came to 6.6 s with 6.4 s left,
// and the runtime exited with its Service still bound (testkit/scale, 500 applications).
func beforeDeadline(delay, remaining time.Duration) time.Duration {
	if remaining <= 0 || delay <= remaining/2 {
		return delay
	}
	return wait.Jitter(remaining/4, 1)
}

// forever is a sleepOrKick delay that only a kick or the end of ctx interrupts.
const forever time.Duration = -1

// sleepOrKick waits d (forever when d < 0), or less when what is wanted changes (a kick: the
// new state is written at once, whatever backoff was running) and reports false when ctx
// ended meanwhile.
func (a *Agent) sleepOrKick(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	var timeout <-chan time.Time
	if d >= 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-timeout:
	case <-a.kick:
	}
	return true
}
