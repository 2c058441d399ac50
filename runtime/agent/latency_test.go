package agent_test

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// cycle makes the UI ready, waits for the bind, closes it, waits for the withdrawal, and
// returns both latencies: from the UI's readiness (or loss) to the API server's
// acknowledgement of the PATCH.
func cycle(t testing.TB, a *app, r *running) (bind, withdraw time.Duration) {
	t.Helper()
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.StartingUp})
	time.Sleep(150 * time.Millisecond) // seen starting up
	t0 := time.Now()
	ui.Set(fakespark.Ready)
	st := r.waitBound(t, ui.Port)
	bind = st.At.Sub(t0)
	// At a random phase of the poll, as a real UI would go.
	time.Sleep(100*time.Millisecond + time.Duration(rand.Int64N(int64(100*time.Millisecond))))
	t1 := time.Now()
	ui.Close()
	st = r.waitStatus(t, 20*time.Second, "withdrawn", func(s agent.Status) bool { return !s.Bound && s.At.After(t1) })
	withdraw = st.At.Sub(t1)
	return bind, withdraw
}

// TestLatency measures bind and withdrawal latency at the default 100 ms poll. The target is
// 150 ms; the test fails only beyond 1 s (shared, loaded CI machines) and logs the numbers.
func TestLatency(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	r := start(t, a, a.config(t))
	var binds, withdraws []time.Duration
	for i := 0; i < 5; i++ {
		b, w := cycle(t, a, r)
		binds, withdraws = append(binds, b), append(withdraws, w)
	}
	report := func(name string, ds []time.Duration) {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		t.Logf("%s latency over %d cycles: min %s, median %s, max %s", name, len(ds),
			ds[0].Round(time.Millisecond), ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
		if ds[len(ds)/2] > time.Second {
			t.Errorf("%s median latency %s, target 150ms", name, ds[len(ds)/2])
		}
	}
	report("bind", binds)
	report("withdraw", withdraws)
	a.waitAudit(t, map[string]int{"patch": 10, "get": 0})
}

// BenchmarkLatency reports bind and withdrawal latency (from the UI's readiness or loss to
// the API server's acknowledgement) per cycle, at the default poll interval.
func BenchmarkLatency(b *testing.B) {
	a := newApp(b, shared(b), appOpts{})
	r := start(b, a, a.config(b))
	var bind, withdraw time.Duration
	n := 0
	for b.Loop() {
		bd, wd := cycle(b, a, r)
		bind += bd
		withdraw += wd
		n++
	}
	b.ReportMetric(float64(bind.Milliseconds())/float64(n), "bind-ms")
	b.ReportMetric(float64(withdraw.Milliseconds())/float64(n), "withdraw-ms")
}
