package agent_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// TestSIGTERMWithdrawalRefusedWith429: the API server refuses the withdrawal on SIGTERM with
// 429 and a Retry-After longer than the 10 s the runtime waits for it (testkit/scale, 500
// applications ended together: Retry-After 1 s grown by the backoff and its jitter came to
// 6.6 s with 6.4 s left). The retry is brought within the time left, so the Service is
// withdrawn before the runtime exits, with one refused and one applied withdrawal.
func TestSIGTERMWithdrawalRefusedWith429(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	var armed atomic.Bool
	var refused atomic.Int32
	cfg := rest.CopyConfig(a.user)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && armed.CompareAndSwap(true, false) {
				refused.Add(1)
				return tooManyRequests(req, 10), nil
			}
			return rt.RoundTrip(req)
		})
	}
	a.user = cfg
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)

	armed.Store(true)
	began := time.Now()
	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	took := time.Since(began)
	if refused.Load() != 1 {
		t.Fatalf("%d withdrawals refused with 429, want the first one", refused.Load())
	}
	if !strings.Contains(r.logs.String(), "429") {
		t.Errorf("the refusal is not in the log:\n%s", r.logs.String())
	}
	a.checkWithdrawn(t)
	t.Logf("withdrawn %s after SIGTERM, its first attempt refused with Retry-After: 10", took.Round(time.Millisecond))
	a.waitAudit(t, map[string]int{"patch": 2, "get": 0}) // the refused patch never reached the API server
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// tooManyRequests is what the API server's priority and fairness answers a request it rejects:
// 429, Retry-After and a plain-text body, not a Status (k8s.io/apiserver v0.37.2
// pkg/server/filters/priority-and-fairness.go, tooManyRequests); client-go turns the header
// into the error's suggested delay (k8s.io/client-go v0.37.2 rest/request.go,
// transformResponse and newUnstructuredResponseError).
func tooManyRequests(req *http.Request, seconds int) *http.Response {
	body := "Too many requests, please try again later.\n"
	return &http.Response{
		StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"}, "Retry-After": {itoa(seconds)}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: req, ContentLength: int64(len(body)),
	}
}
