package binder

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// TestPatchOnceOn429: a patch the API server's priority and fairness refuses (429,
// Retry-After: 1, as it answered 500 runtimes started in a burst in testkit/scale) is sent
// once and returned as a transient failure carrying the server's delay: the retry is the
// agent's, jittered, not client-go's, which came back after exactly one second, in step with
// every other runtime refused in that second.
func TestPatchOnceOn429(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		// As priority and fairness answers: the header and plain text, no Status
		// (k8s.io/apiserver v0.37.2 pkg/server/filters/priority-and-fairness.go, tooManyRequests).
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c, err := NewClient(&rest.Config{Host: srv.URL}, target)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	err = c.BindWith(ctx, 4050, State{})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != Transient {
		t.Fatalf("bind refused with 429: %v, want a transient Failure", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests for one bind refused with 429 (in %s), want 1: the retry is the agent's", n, time.Since(start).Round(time.Millisecond))
	}
	if s, ok := apierrors.SuggestsClientDelay(err); !ok || s != 1 {
		t.Errorf("the failure's suggested delay: %d %v, want the server's 1 s", s, ok)
	}
}
