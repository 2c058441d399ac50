//go:build scale

package scale

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// `make scale-history N=… DURATION=…`: not part of `make test` (the build tag keeps it out).
var (
	historyN        = flag.Int("history.n", 10_000, "handed-off UI Services when the redirector starts")
	historyDuration = flag.Duration("history.duration", 60*time.Second, "how long the churn lasts")
	historyRate     = flag.Int("history.rate", 10, "applications handed off, and old Services deleted, a second")
	historyClients  = flag.Int("history.clients", 1, "loopback clients asking for redirects in the churn's second half, one request at a time each")
	historyEnv      = flag.String("history.env", "", "space-separated NAME=value added to the example Deployment's environment (e.g. GOMEMLIMIT=off)")
	historyExpire   = flag.Duration("history.expire", 0, "when set: the API server without a watch cache for Services, and the redirector cut off it this long after the churn, so that its watch expires (410) and it lists again")
	historyOut      = flag.String("history.out", "", "also write the report to this file")
)

// TestHistoryScale is the History redirector at N handed-off Services with churn
// (docs/performance.md "The History redirector at 10,000 Services"); the goals TestHistorySmall
// asserts are asserted here too.
func TestHistoryScale(t *testing.T) {
	bin := buildRuntime(t)
	var args map[string][]string
	if *historyExpire > 0 {
		args = ExpireArgs
	}
	c, audit := Cluster(t, args)
	r := RunHistory(t, c, audit, bin, "history-scale", HistoryConfig{N: *historyN, Churn: *historyDuration, Rate: *historyRate,
		Clients: *historyClients, Parallel: 16, Env: strings.Fields(*historyEnv), Expire: *historyExpire})
	report := fmt.Sprintf("sparkui History redirector scale run, %d CPUs, %s\n\n", runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339)) + r.Report()
	t.Log("\n" + report)
	if *historyOut != "" {
		if err := os.WriteFile(*historyOut, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
	checkHistory(t, r)
}
