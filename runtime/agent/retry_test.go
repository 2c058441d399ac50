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
