package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/binder"
)

// publishing is the progress of publishing one binding's external URI.
type publishing struct {
	gen      uint64 // the binding (want generation)
	finished bool   // written, or given up until the next binding
	read     bool   // read the Service (GET) before resolving again
	poll     wait.Backoff
	backoff  wait.Backoff
	lastWait time.Time
	start    time.Time
}

// publishStep resolves the external URI from the Service as last seen (reading it again first
// when a load balancer's ingress was not there yet) and writes it. It returns when to try
// again, or finished: written, or given up until the next binding (no route can be resolved,
// or the Service is no longer bound to this driver).
func (a *Agent) publishStep(ctx context.Context, p *publishing) (retry time.Duration, finished bool) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	opCtx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	a.mu.Lock()
	if a.wantGen != p.gen {
		a.mu.Unlock()
		return 0, false // superseded: the loop writes the new state first
	}
	a.cancelOp = cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.cancelOp = nil
		a.mu.Unlock()
	}()

	view := a.client.View()
	if p.read || view == nil {
		var err error
		if view, err = a.client.Get(opCtx); err != nil {
			if ctx.Err() != nil || opCtx.Err() == context.Canceled {
				return 0, false
			}
			a.log.Warn("cannot read the UI Service to resolve its external URI", "err", err)
			return p.backoff.Step(), false
		}
		p.read = false
	}
	uri, done, err := a.uri.Resolve(opCtx, view, a.cfg.TLS)
	if err != nil {
		msg := fmt.Sprintf("external URI (--external-uri=%s) of Service %s/%s: %v; not published", a.cfg.ExternalURI, a.cfg.PodNamespace, a.cfg.Service, err)
		a.log.Error(msg)
		a.fatal(msg)
		return 0, true
	}
	if !done {
		p.read = true
		if time.Since(p.lastWait) >= a.cfg.WaitLog {
			a.log.Info("waiting for the load balancer's ingress to publish the external URI", "service", a.cfg.Service, "waited", time.Since(p.start).Round(time.Millisecond))
			p.lastWait = time.Now()
		}
		return p.poll.Step(), false
	}
	if view.URI() == uri {
		a.publishedURI(p.gen, uri)
		return 0, true // already there (written by a previous run of the container)
	}
	start := time.Now()
	err = a.client.Publish(opCtx, uri)
	if err == nil {
		a.log.Info("external URI published", "service", a.cfg.Service, "uri", uri, "annotation", names.AnnotationResolvedExternalURI,
			"took", time.Since(start).Round(time.Millisecond), "since_bound", time.Since(p.start).Round(time.Millisecond))
		a.publishedURI(p.gen, uri)
		return 0, true
	}
	if ctx.Err() != nil || opCtx.Err() == context.Canceled {
		return 0, false
	}
	var f *binder.Failure
	if errors.As(err, &f) && f.Kind == binder.NotOurs {
		a.log.Warn(f.Message)
		return 0, true
	}
	msg := err.Error()
	if errors.As(err, &f) && f.Fatal() {
		a.fatal(msg)
	}
	delay := p.backoff.Step()
	a.log.Warn("cannot publish the external URI", "err", msg, "retry_in", delay.Round(time.Millisecond))
	return delay, false
}

func (a *Agent) publishedURI(gen uint64, uri string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.haveGen != gen || !a.have.bound {
		return
	}
	a.status.URI = uri
	close(a.changed)
	a.changed = make(chan struct{})
}
