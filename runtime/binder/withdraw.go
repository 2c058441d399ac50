package binder

import (
	"context"
	"errors"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// WithdrawURIOps decides, from the last response, what the withdrawal does to the resolved
// external URI: remove it when it was there, clear it (add + remove) when an outside
// controller may have written it since (provide-external-uri: "true") or the state is
// unknown, nothing when the Service had no annotation and none is expected.
func WithdrawURIOps(view *externaluri.Service) URIOps {
	switch {
	case view == nil:
		return ClearURI
	case view.URI() != "":
		return RemoveURI
	case view.Metadata.Annotations[names.AnnotationProvideExternalURI] == "true":
		return ClearURI
	}
	return KeepURI
}

// Withdrawal is what a withdrawal found.
type Withdrawal int

const (
	// Withdrawn: the API server applied the withdrawn selector.
	Withdrawn Withdrawal = iota
	// Gone: the Service does not exist (Spark deletes its Services at stop).
	Gone
	// NotHeld: a guard refused it: the Service is bound by another Pod since (a later Pod's
	// bind replaced this one's ownerReference), was never bound by this Pod, or is not this
	// application's. Nothing was changed and nothing of this Pod's is routed.
	NotHeld
)

func (w Withdrawal) String() string {
	return [...]string{"withdrawn", "gone", "not-held"}[w]
}

// Withdraw sends WithdrawPatch, removing the resolved external URI in the same patch. A
// Service that is gone, or that this Pod does not hold (another application's, or bound by a
// later Pod of this one), counts as withdrawn: there is nothing of this Pod's left to route.
// No read follows a refusal: whose the Service is does not change what to do.
//
// One request in the normal case. When the patch with an annotation operation is refused (the
// annotation, or metadata.annotations, is not there after all: removed by its controller, or
// the state was unknown after a restart; or a guard failed), the plain withdrawal follows at
// once: two requests, no read.
//
// With a hand-off (h.URI set) the withdrawal is HandoffPatch instead: one request in the
// normal case; when it is refused, the other annotations form follows at once (the
// annotations are not as the last response had them: an unknown state after a restart, or
// written or removed meanwhile); refused again, a guard failed.
func (c *Client) Withdraw(ctx context.Context, h Handoff) (Withdrawal, error) {
	return c.WithdrawWith(ctx, h, State{})
}

// WithdrawWith is Withdraw writing the status annotations st (withdrawn, or handed-off) in
// the same patch. Each refused form is followed by the next at once, no read: the one the last
// response calls for; the resolved URI cleared rather than removed (it went meanwhile); the
// other annotations form (metadata.annotations missing, or there after all), unless the last
// response showed them. All refused: a guard failed.
func (c *Client) WithdrawWith(ctx context.Context, h Handoff, st State) (Withdrawal, error) {
	var err error
	if h.URI != "" {
		err = c.handoff(ctx, h, st)
	} else {
		v := c.View()
		have := v == nil || len(v.Metadata.Annotations) > 0
		ops := WithdrawURIOps(v)
		err = c.patch(ctx, c.t.WithdrawPatchWith(ops, st, have))
		if ops != KeepURI && isGuardFailure(err) {
			err = c.patch(ctx, c.t.WithdrawPatchWith(KeepURI, st, have))
		}
		// When the last response showed annotations, a refusal is a guard's: no third try, so
		// that a Pod that no longer holds the binding still costs one request.
		if st.State != "" && isGuardFailure(err) && (v == nil || len(v.Metadata.Annotations) == 0) {
			err = c.patch(ctx, c.t.WithdrawPatchWith(ClearURI, st, !have))
		}
	}
	switch {
	case err == nil:
		return Withdrawn, nil
	case isGuardFailure(err):
		return NotHeld, nil
	}
	err = c.classify(ctx, "withdraw", err)
	var f *Failure
	if errors.As(err, &f) && f.Kind == NotFound {
		return Gone, nil
	}
	return 0, err
}

// handoff sends HandoffPatch in the form the last response calls for (metadata.annotations
// unknown counts as there: the function writes annotations on the UI Services it builds),
// then the other form when that is refused.
func (c *Client) handoff(ctx context.Context, h Handoff, st State) error {
	v := c.View()
	have := v == nil || len(v.Metadata.Annotations) > 0
	err := c.patch(ctx, c.t.HandoffPatchWith(h, WithdrawURIOps(v), have, st))
	if isGuardFailure(err) {
		// Unknown now: clear the resolved URI whether or not it is there.
		err = c.patch(ctx, c.t.HandoffPatchWith(h, ClearURI, !have, st))
	}
	return err
}
