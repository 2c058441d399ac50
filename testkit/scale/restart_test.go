package scale

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestScaleRestart: 40 applications started in a burst; once the first 10 are bound,
// kube-apiserver is killed for 4 s (then its own start), and the other 30 UIs come up in the
// middle of the outage, together. Every application is bound after it is back and withdrawn
// at the end, nothing is left bound, each runtime's connection attempts while it was away
// stay within its backoff, its requests after it is back are O(1), and their peak per second
// stays well below what retries that are not spread (or a hot loop) would send.
func TestScaleRestart(t *testing.T) {
	bins := Build(t)
	c, audit := Cluster(t, nil)
	r := Run(t, c, audit, bins, "scale-restart", Config{N: 40, Startup: 2 * time.Second, Timeout: 2 * time.Minute, RestartAPIServer: 4 * time.Second})
	t.Log("\n" + r.Report("burst, API server restarted"))
	checkGoals(t, r)
	checkRestart(t, r)
}

// maxAfterRestart bounds a runtime's requests from the API server's new start to the SIGTERMs.
// Until the new API server's RBAC authorizer has its caches it answers 403 (measured; the
// runtime cannot tell that from a missing RoleBinding, so it reports an RBAC failure, with a
// Warning event, and retries on its fatal backoff): at most forbiddenAttemptsWithin(window)
// patches and as many events in that time, where the window runs from the new start until the
// API server was healthy, with 5 s to spare. Then its bind (one patch, a second when the
// first form is refused: BindWith) and its Bound event (a create, and a patch when the
// recorder makes a series).
func maxAfterRestart(rr *RestartResult) int {
	return 2*forbiddenAttemptsWithin(rr.Up.Sub(rr.Start)+5*time.Second) + 4
}

// checkRestart asserts what an API server restart must not do: leave an application unbound,
// make a runtime hammer the API server while it is away, or bring every runtime back in the
// same second.
func checkRestart(t *testing.T, r *Result) {
	t.Helper()
	rr := r.Restart
	if rr == nil {
		t.Fatal("no API server restart measured")
	}
	if rr.BoundBefore >= r.N || rr.Late == 0 {
		t.Errorf("%d of %d applications bound before the API server went away, %d UIs came up while it was away: the restart tested nothing", rr.BoundBefore, r.N, rr.Late)
	}
	if len(rr.UnboundAfterDown) > 0 {
		t.Errorf("%d applications not bound before the outage had no applied bind after it: %s", len(rr.UnboundAfterDown), strings.Join(rr.UnboundAfterDown[:min(5, len(rr.UnboundAfterDown))], ", "))
	}
	// The window a runtime's attempts can fall in: from the kill until it was healthy again.
	limit := attemptsWithin(rr.Up.Sub(rr.Down))
	var bad []string
	for app, n := range rr.OutageDials {
		if n > limit {
			bad = append(bad, fmt.Sprintf("%s: %d connection attempts while the API server was away %.1f s (its backoff allows %d)", app, n, rr.Up.Sub(rr.Down).Seconds(), limit))
		}
	}
	for app, n := range rr.AfterRequests {
		if n > maxAfterRestart(rr) {
			bad = append(bad, fmt.Sprintf("%s: %d requests after the API server's new start (at most %d)", app, n, maxAfterRestart(rr)))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d over the bound, e.g. %s", len(bad), strings.Join(bad[:min(8, len(bad))], "; "))
	}
	if attempted := sumOf(rr.OutageDials); attempted < rr.Late {
		t.Errorf("%d connection attempts while the API server was away, for %d UIs that came up then: the count missed them", attempted, rr.Late)
	}
	// A runtime has at most one request of its reconcile loop and one of its event recorder
	// in flight, and retries no sooner than its backoff: two per application in a second is
	// the most a burst can hold (the new API server answers together whatever queued while it
	// started, so the retries' spread cannot lower that), where a hot loop sends hundreds.
	if peak, at := rr.Peak(); peak > 2*r.N {
		t.Errorf("%d requests in second %d after the API server's new start, more than two per application (%d): %s", peak, at, r.N, histogram(rr.PerSecond))
	}
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
