package externaluri

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkui/sparkui/internal/names"
)

var (
	// ErrWithdrawn: the UI Service is withdrawn (the UI went away or the driver stops).
	ErrWithdrawn = errors.New("the UI Service is withdrawn (selector has " + names.WithdrawnSelectorKey + "): the UI is gone")
	// ErrHandedOff: the UI Service is handed off to the History Server redirector; the
	// *HandedOff error carries the History Server page.
	ErrHandedOff = errors.New("the UI Service is handed off to the History Server (selector has " + names.LabelHistoryRedirector + "): the UI is gone")
	// ErrDeleted: the UI Service was there and is gone (Spark deletes it at stop).
	ErrDeleted = errors.New("the UI Service was deleted")
	// ErrTimeout: no URI within the time allowed.
	ErrTimeout = errors.New("timed out")
)

// HandedOff is the ErrHandedOff of a Service, with its History Server page ("" when the
// annotation is missing).
type HandedOff struct{ HistoryURI string }

func (h *HandedOff) Error() string {
	if h.HistoryURI == "" {
		return ErrHandedOff.Error() + "; no " + names.AnnotationHistoryURI + " annotation"
	}
	return ErrHandedOff.Error() + "; its History Server page is " + h.HistoryURI
}

func (h *HandedOff) Unwrap() error { return ErrHandedOff }

// Getter reads the Service; found is false on 404.
type Getter func(ctx context.Context) (svc *Service, found bool, err error)

// Wait reads the Service with get (capped exponential backoff with jitter) until it carries a
// resolved URI while bound, and returns it; report (nil: none) hears every change of what it
// sees meanwhile, the runtime's waiting state and reason included. It fails with ErrWithdrawn
// when the Service is withdrawn (unless a later runtime of the application says it waits to
// bind it: the Service will be bound again), a *HandedOff (ErrHandedOff) when it is handed off to the History Server, ErrDeleted when a Service seen before is gone, and ErrTimeout (wrapped with the
// last state seen) when ctx ends first.
func Wait(ctx context.Context, get Getter, b wait.Backoff, report func(string)) (string, error) {
	seen := false
	last := "not read yet"
	for {
		svc, found, err := get(ctx)
		prev := last
		switch {
		case err != nil && ctx.Err() != nil:
			// The time allowed ran out during the read: what was seen before is the news.
			return "", fmt.Errorf("%w: %s", ErrTimeout, last)
		case err != nil:
			last = err.Error()
		case !found && seen:
			return "", ErrDeleted
		case !found:
			last = "the Service does not exist (yet?)"
		case svc.Withdrawn() && svc.Waiting() == "":
			return "", ErrWithdrawn
		case svc.HandedOff():
			return "", &HandedOff{HistoryURI: svc.HistoryURI()}
		default:
			seen = true
			if uri := svc.URI(); uri != "" && svc.Bound() {
				return uri, nil
			}
			switch {
			case svc.Waiting() != "":
				last = "the UI Service is not bound yet: the runtime is " + svc.Waiting()
			case !svc.Bound():
				last = "the UI Service is not bound yet (the UI has not been found)"
			default:
				last = "bound, no " + names.AnnotationResolvedExternalURI + " annotation yet"
			}
		}
		if report != nil && last != prev {
			report(last)
		}
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("%w: %s", ErrTimeout, last)
		case <-t.C:
		}
	}
}
