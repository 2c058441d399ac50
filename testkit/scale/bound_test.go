package scale

import (
	"fmt"
	"testing"
)

// TestAppliedBound: the bound on applied patches follows what the runtime could not know
// (patches it did not hear back about), and nothing else.
func TestAppliedBound(t *testing.T) {
	for _, c := range []struct {
		name            string
		codes           map[int]int // answer → patches
		unanswered      int
		restart, beyond bool
	}{
		{"bind and withdrawal", map[int]int{200: 2}, 0, false, false},
		{"a third applied patch it had an answer for", map[int]int{200: 3}, 0, false, true},
		{"a retry after a late answer", map[int]int{200: 3}, 1, false, false},
		{"two retries after two late answers (make scale N=500)", map[int]int{200: 4}, 2, false, false},
		{"a re-send beyond its late answers", map[int]int{200: 4}, 1, false, true},
		{"a 504 that was applied (make scale N=200)", map[int]int{200: 1, 504: 1}, 1, false, false},
		{"no bind or no withdrawal", map[int]int{200: 1}, 0, false, true},
		{"a patch lost with the killed API server", map[int]int{200: 3}, 0, true, false},
		{"refused ten times", map[int]int{200: 2, 429: 10}, 0, false, false},
		{"refused eleven times", map[int]int{200: 2, 429: 11}, 0, false, true},
	} {
		req := Requests{}
		for code, n := range c.codes {
			req["patch services"] += n
			req[fmt.Sprintf("patch services %d", code)] += n
		}
		r := &Result{Requests: map[string]Requests{"app": req}, Unanswered: map[string]int{"app": c.unanswered}}
		if c.restart {
			r.Restart = &RestartResult{}
		}
		if got := beyondBound(r); (len(got) > 0) != c.beyond {
			t.Errorf("%s: beyond the bound %v, want %v", c.name, got, c.beyond)
		}
	}
}
