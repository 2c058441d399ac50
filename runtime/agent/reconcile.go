package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/binder"
)

// reconcile makes the Service match want.
func (a *Agent) reconcile(ctx context.Context) {
	transient, fatalB := a.cfg.Backoff, a.cfg.FatalBackoff
	var (
		lastMsg    string
		lastLogged time.Time
		notFound   time.Time // first 404 of the current streak
		pub        publishing
	)
	for {
		select { // a kick from before this read is already accounted for
		case <-a.kick:
		default:
		}
		a.mu.Lock()
		want, gen, have, haveGen, unknown := a.want, a.wantGen, a.have, a.haveGen, a.unknown
		a.mu.Unlock()
		if gen != 0 && haveGen == gen && have.bound && a.uri != nil && (pub.gen != gen || !pub.finished) {
			// Bound, and the external URI of this binding not published yet.
			if pub.gen != gen {
				pub = publishing{gen: gen, poll: a.cfg.URIPoll, backoff: a.cfg.Backoff}
			}
			delay, finished := a.publishStep(ctx, &pub)
			if finished {
				pub.finished = true
				continue
			}
			if !a.sleepOrKick(ctx, delay) {
				return
			}
			continue
		}
		if gen == 0 || haveGen == gen {
			if !a.sleepOrKick(ctx, forever) {
				return
			}
			continue
		}
		if want.same(have) && !unknown {
			a.applied(want, gen) // already so: nothing to write
			continue
		}
		opCtx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
		a.mu.Lock()
		if a.wantGen != gen { // changed meanwhile
			a.mu.Unlock()
			cancel()
			continue
		}
		a.cancelOp = cancel
		a.mu.Unlock()
		start := time.Now()
		var (
			err     error
			outcome binder.Withdrawal
		)
		if want.bound {
			err = a.client.Bind(opCtx, want.port)
		} else {
			outcome, err = a.client.Withdraw(opCtx)
		}
		a.mu.Lock()
		a.cancelOp = nil
		superseded := a.wantGen != gen
		if err != nil {
			// A failed or cancelled write may still have been applied: whatever is wanted
			// next must be written, even if it equals what was last acknowledged.
			a.unknown = true
		}
		a.mu.Unlock()
		cancel()
		if err == nil {
			transient, fatalB = a.cfg.Backoff, a.cfg.FatalBackoff
			notFound, lastMsg = time.Time{}, ""
			took := time.Since(start).Round(time.Millisecond)
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
			default:
				a.log.Info("UI Service withdrawn", "service", a.cfg.Service, "selector", names.WithdrawnSelectorKey+"="+a.cfg.PodUID,
					"reason", want.reason, "took", took)
			}
			a.writeState(want)
			if outcome != binder.NotHeld {
				a.clearFatal()
			}
			a.applied(want, gen)
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if superseded {
			continue // what is wanted changed: write the new state at once
		}
		var f *binder.Failure
		if !errors.As(err, &f) {
			f = &binder.Failure{Kind: binder.Transient, Message: err.Error(), Err: err}
		}
		var delay time.Duration
		msg := f.Message
		level := slog.LevelError
		switch f.Kind {
		case binder.Transient:
			delay = transient.Step()
			level = slog.LevelWarn
		case binder.NotFound:
			if notFound.IsZero() {
				notFound = time.Now()
			}
			if waited := time.Since(notFound); waited < a.cfg.ServiceWait {
				delay = transient.Step()
				msg += fmt.Sprintf(" (retrying for up to %s)", a.cfg.ServiceWait)
				level = slog.LevelWarn
			} else {
				delay = fatalB.Step()
				msg += fmt.Sprintf(" (still missing after %s; retrying)", waited.Round(time.Second))
				a.fatal(msg)
			}
		default:
			delay = fatalB.Step()
			a.fatal(msg)
		}
		a.setErr(msg)
		if msg != lastMsg || time.Since(lastLogged) >= a.cfg.WaitLog {
			a.log.Log(ctx, level, "API request failed", "kind", f.Kind.String(), "err", msg, "retry_in", delay.Round(time.Millisecond))
			lastMsg, lastLogged = msg, time.Now()
		} else {
			a.log.Debug("API request failed", "kind", f.Kind.String(), "retry_in", delay.Round(time.Millisecond))
		}
		if !a.sleepOrKick(ctx, delay) {
			return
		}
	}
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
