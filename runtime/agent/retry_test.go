package agent

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sparkui/sparkui/runtime/binder"
)

// TestRetryDelay: after a refusal that names a delay (429 with Retry-After: 1) the retry waits
// at least that long and is spread over up to half of it more, so that the runtimes refused
// in one second do not come back in one second; a longer backoff step is kept, and a failure
// naming no delay waits the step.
func TestRetryDelay(t *testing.T) {
	refused := &binder.Failure{Kind: binder.Transient, Message: "429", Err: apierrors.NewTooManyRequests("Too many requests", 1)}
	seen := map[time.Duration]bool{}
	lo, hi := time.Hour, time.Duration(0)
	for i := 0; i < 200; i++ {
		d := retryDelay(200*time.Millisecond, refused)
		if d < time.Second || d > 1500*time.Millisecond {
			t.Fatalf("delay after Retry-After: 1 and a 200ms step: %s, want 1s..1.5s", d)
		}
		seen[d] = true
		lo, hi = min(lo, d), max(hi, d)
	}
	if hi-lo < 250*time.Millisecond || len(seen) < 100 {
		t.Errorf("200 delays spread over %s..%s (%d distinct): not jittered", lo, hi, len(seen))
	}
	if d := retryDelay(4*time.Second, refused); d != 4*time.Second {
		t.Errorf("a 4s step after Retry-After: 1: %s, want the step", d)
	}
	plain := &binder.Failure{Kind: binder.Transient, Message: "unreachable", Err: fmt.Errorf("connection refused")}
	if d := retryDelay(300*time.Millisecond, plain); d != 300*time.Millisecond {
		t.Errorf("no suggested delay: %s, want the step", d)
	}
}

// TestBeforeDeadline: while a withdrawal for good is waited for, a retry that would come after
// half of the time left is brought forward to a quarter to a half of it (jittered), so that
// the withdrawal is tried again before the preStop hook or SIGTERM stops waiting; a short
// delay, or no deadline left, is kept.
func TestBeforeDeadline(t *testing.T) {
	seen := map[time.Duration]bool{}
	for i := 0; i < 100; i++ {
		d := beforeDeadline(6600*time.Millisecond, 6400*time.Millisecond) // testkit/scale, 500 applications
		if d < 1600*time.Millisecond || d > 3200*time.Millisecond {
			t.Fatalf("a 6.6s retry with 6.4s left: %s, want 1.6s..3.2s", d)
		}
		seen[d] = true
	}
	if len(seen) < 50 {
		t.Errorf("100 delays, %d distinct: not jittered", len(seen))
	}
	if d := beforeDeadline(time.Second, 8*time.Second); d != time.Second {
		t.Errorf("a 1s retry with 8s left: %s, want it kept", d)
	}
	if d := beforeDeadline(3*time.Second, 0); d != 3*time.Second {
		t.Errorf("no time left: %s, want the delay kept", d)
	}
}
