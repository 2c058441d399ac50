package scale

import (
	"testing"
	"time"
)

// TestHistorySmall is `make scale-history`'s small form, in `make test` so the harness cannot
// rot: the built redirector, under the example's identity, on 500 handed-off UI Services while
// 10 applications a second are handed off and 10 old Services deleted for 5 s. Every handed-off
// Service redirects by its header to its page, every deleted or bound one answers 404, before
// and after a restart (a fresh list), with no error anywhere; and the redirector stays within
// the example Deployment's memory limit (64Mi), which at this size it does with room to spare
// on any machine, however loaded.
func TestHistorySmall(t *testing.T) {
	bin := buildRuntime(t)
	c, audit := Cluster(t, nil)
	r := RunHistory(t, c, audit, bin, "history-small", HistoryConfig{N: 500, Churn: 5 * time.Second, Rate: 10, Clients: 1, Parallel: 8})
	t.Log("\n" + r.Report())
	checkHistory(t, r)
}

// historyMemoryLimit is the example Deployment's memory limit.
const historyMemoryLimit = 64 << 20

// checkHistory asserts what must hold at every size.
func checkHistory(t *testing.T, r *HistoryResult) {
	t.Helper()
	// The churn ends ceil(rate × duration) applications at most; at least half of them even
	// on a machine so loaded that the ticker falls behind.
	want := r.Cfg.Rate * int(r.Cfg.Churn.Seconds())
	if len(r.Handed) < want/2 || len(r.Deleted) < want/2 || len(r.Handed) != len(r.Handoff) {
		t.Errorf("the churn handed off %d and deleted %d Services, want about %d each", len(r.Handed), len(r.Deleted), want)
	}
	if len(r.Lookups) == 0 {
		t.Error("no lookup was made during the churn")
	}
	for what, s := range map[string]Sample{"first start": r.Start, "after the churn": r.AfterChurn, "restart": r.Restart} {
		if s.HWM == 0 || s.HWM > historyMemoryLimit {
			t.Errorf("%s: VmHWM %d bytes, want at most the example's limit (64 MiB)", what, s.HWM)
		}
	}
	if r.RSSMax > historyMemoryLimit {
		t.Errorf("VmRSS during the churn reached %d bytes, want at most 64 MiB", r.RSSMax)
	}
	// One list per process and watches; never a get, and nothing per redirect.
	if r.Requests["list services 200"] != 2 || r.Requests["list services"] != 2 || r.Requests["get services"] != 0 {
		t.Errorf("the redirector's requests: %v, want one list per process and watches", r.Requests)
	}
}
