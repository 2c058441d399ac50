package scale

import (
	"strings"
	"testing"
	"time"
)

// TestHistorySmall is `make scale-history`'s small form, in `make test` so the harness cannot
// rot: the built redirector, under the example's identity, on 500 handed-off UI Services while
// 10 applications a second are handed off and 10 old Services deleted for 5 s; then its watch
// outlives etcd's compaction while 10 more are deleted (the API server without a watch cache
// for Services, ExpireArgs), and it lists again; then a restart. Every handed-off Service
// redirects by its header to its page, every deleted or bound one answers 404, after the churn,
// the relist and the restart, with no error anywhere; and the redirector stays within the
// example Deployment's memory limit (64Mi), which at this size it does with room to spare on
// any machine, however loaded.
func TestHistorySmall(t *testing.T) {
	bin := buildRuntime(t)
	c, audit := Cluster(t, ExpireArgs)
	r := RunHistory(t, c, audit, bin, "history-small", HistoryConfig{N: 500, Churn: 5 * time.Second, Rate: 10, Clients: 1, Parallel: 8,
		Expire: 15 * time.Second})
	if r.Expired == nil {
		t.Error("the watch did not expire")
	}
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
	samples := map[string]Sample{"first start": r.Start, "after the churn": r.AfterChurn, "restart": r.Restart}
	if x := r.Expired; x != nil {
		samples["the expired watch's relist"] = Sample{HWM: x.HWM, RSS: x.RSS}
	}
	for what, s := range samples {
		if s.HWM == 0 || s.HWM > historyMemoryLimit {
			t.Errorf("%s: VmHWM %d bytes, want at most the example's limit (64 MiB)", what, s.HWM)
		}
	}
	if r.RSSMax > historyMemoryLimit {
		t.Errorf("VmRSS during the churn reached %d bytes, want at most 64 MiB", r.RSSMax)
	}
	// Lists (one per process, and one after an expired watch; in pages of 500 from etcd
	// without the watch cache) and watches, every one answered 200; never a get, and nothing
	// per redirect. The expired watch's relist first asks for the last resourceVersion it saw,
	// which etcd has compacted too: one 410 (client-go reflector.go relistResourceVersion),
	// then a list from the latest.
	lists, expired := 2, 0
	if r.Expired != nil {
		lists, expired = 3, 1
	}
	for k, n := range r.Requests {
		switch {
		case strings.HasSuffix(k, " (page)"), k == "list services 410" && n <= expired:
		case !strings.HasPrefix(k, "list services") && !strings.HasPrefix(k, "watch services") || !isCount(k) && !strings.HasSuffix(k, " 200"):
			t.Errorf("the redirector's requests: %s ×%d, want only lists and watches of Services, answered 200", k, n)
		}
	}
	pages := (r.Cfg.N + r.Pool + 499) / 500
	if n := r.Requests["list services"] - r.Requests["list services 410"]; n < lists || n > lists*pages {
		t.Errorf("the redirector listed Services %d times (410s aside), want %d lists of 1 to %d pages", n, lists, pages)
	}
}
