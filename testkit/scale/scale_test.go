package scale

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestScaleSmall is `make scale`'s small form, in `make test` so the harness cannot rot: 50
// applications started in a burst, ended by a burst of SIGTERMs. Every application is bound
// (its UI Service's EndpointSlice gets its Pod's address) and then withdrawn, nothing is left
// bound or in an EndpointSlice, and each runtime's requests stay O(1): patches of its own
// Service only, no read of the API at all.
func TestScaleSmall(t *testing.T) {
	bins := Build(t)
	c, audit := Cluster(t, nil)
	r := Run(t, c, audit, bins, "scale-small", Config{N: 50, Startup: 2 * time.Second, Timeout: 2 * time.Minute})
	t.Log("\n" + r.Report("burst"))
	checkGoals(t, r)
}

// maxPatches bounds a runtime's patches of its Service over a life: the bind, the withdrawal,
// and one retry of either (a 409 or a 5xx under a burst).
const maxPatches = 3

// checkGoals asserts what must hold at every size.
func checkGoals(t *testing.T, r *Result) {
	t.Helper()
	for _, f := range r.FailedToBind {
		t.Error(f)
	}
	if len(r.LeftBound) > 0 {
		t.Errorf("%d UI Services still bound after every withdrawal: %s", len(r.LeftBound), strings.Join(r.LeftBound[:min(5, len(r.LeftBound))], "; "))
	}
	for svc, n := range r.SliceEndpoints {
		if n != 0 {
			t.Errorf("%s: %d ready endpoints left in its EndpointSlices after the withdrawal", svc, n)
		}
	}
	for svc, n := range r.SlicePeak {
		if n != 1 {
			t.Errorf("%s: at most %d ready endpoints while bound, want its Pod's one", svc, n)
		}
	}
	var bad []string
	for app, req := range r.Requests {
		for k, n := range req {
			if !isCount(k) {
				continue
			}
			if k != "patch services" || n > maxPatches || n < 2 {
				bad = append(bad, fmt.Sprintf("%s: %s ×%d", app, k, n))
			}
		}
		if req["patch services"] < 2 {
			bad = append(bad, fmt.Sprintf("%s: %d patches of its Service, want a bind and a withdrawal", app, req["patch services"]))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("requests beyond the bound (patch services 2..%d, nothing else): %d, e.g. %s", maxPatches, len(bad), strings.Join(bad[:min(8, len(bad))], "; "))
	}
}
