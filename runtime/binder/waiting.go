package binder

import (
	"context"
	"errors"

	"github.com/sparkui/sparkui/internal/names"
)

// Routing is what a Service's selector says about who holds it, as far as the waiting state
// is concerned: only a Service that routes nothing may say "waiting".
type Routing int

const (
	// Unrouted: no selector (a UI Service as sparkui-fn writes it, never bound).
	Unrouted Routing = iota
	// WithdrawnRouting: the withdrawn selector (names.WithdrawnSelectorKey) of some Pod.
	WithdrawnRouting
)

var withdrawnKeyPath = "/spec/selector/" + escape(names.WithdrawnSelectorKey)

// WaitingPatch writes the waiting state st on a Service that routes nothing, never on one
// bound to or handed off by any Pod: the usual guards (the application's label, managed-by,
// the port's name), then the selector as r says. Unrouted tests that there is no selector
// (`test` with value null succeeds on a missing member only). WithdrawnRouting proves the
// selector has the withdrawn key, whose value (an earlier Pod's UID) is not known here, so
// no `test` can name it: `move` of that member onto itself fails when it is missing and
// changes nothing when it is there. A bound selector (the driver's labels) and the hand-off's
// (names.RedirectorSelector) have neither form, so a Service bound or handed off by any Pod,
// this one included, refuses the patch. haveAnnotations as in BindPatchWith.
func (t Target) WaitingPatch(r Routing, st State, haveAnnotations bool) []byte {
	ops := t.guards()
	if r == Unrouted {
		ops = append(ops, op{Op: "test", Path: "/spec/selector", Value: nil})
	} else {
		ops = append(ops, op{Op: "move", From: withdrawnKeyPath, Path: withdrawnKeyPath})
	}
	return mustJSON(append(ops, statusOps(st, haveAnnotations)...))
}

// Waited is what a waiting write found.
type Waited int

const (
	// WaitingWritten: the API server applied the waiting state.
	WaitingWritten Waited = iota
	// Routed: the Service is bound or handed off (by another Pod, or by an earlier run of this
	// one), is not this application's, or has no metadata.annotations: nothing was written,
	// and the Service is left to whoever holds it.
	Routed
	// NoService: the Service does not exist (yet).
	NoService
)

// Waiting writes the waiting state st (WaitingPatch). The Service as the last response had it
// chooses the form: one that routes (bound, handed off) is left alone without a request; one
// never seen is first taken for unrouted (the UI Service as sparkui-fn writes it), then, when
// that is refused, for withdrawn by an earlier Pod: at most two requests, no read, and the
// response of the one applied tells the next write which form to send. Both refused: Routed.
// Any other failure is classified as the bind's are (Failure).
func (c *Client) Waiting(ctx context.Context, st State) (Waited, error) {
	v := c.View()
	forms := []Routing{Unrouted, WithdrawnRouting}
	have := v == nil || len(v.Metadata.Annotations) > 0
	if v != nil {
		switch sel := v.Spec.Selector; {
		case len(sel) == 0:
			forms = forms[:1]
		case sel[names.WithdrawnSelectorKey] != "":
			forms = forms[1:]
		default:
			return Routed, nil
		}
	}
	var err error
	for _, r := range forms {
		if err = c.patch(ctx, c.t.WaitingPatch(r, st, have)); !isGuardFailure(err) {
			break
		}
	}
	switch {
	case err == nil:
		return WaitingWritten, nil
	case isGuardFailure(err):
		return Routed, nil
	}
	err = c.classify(ctx, "write the waiting state on", err)
	if f := (*Failure)(nil); errors.As(err, &f) && f.Kind == NotFound {
		return NoService, nil
	}
	return Routed, err
}
