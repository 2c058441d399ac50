package scale

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is the run as the Markdown table of docs/performance.md "The History redirector at
// 10,000 Services".
func (r *HistoryResult) Report() string {
	var b strings.Builder
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	msf := func(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	cfg := r.Cfg
	fmt.Fprintf(&b, "### History redirector: N = %d handed-off Services, churn %d a second for %s, %d lookup clients (%s)\n\n",
		cfg.N, cfg.Rate, cfg.Churn, cfg.Clients, r.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "load average before %.2f %.2f %.2f, after %.2f %.2f %.2f; environment %s\n\n",
		r.Load0[0], r.Load0[1], r.Load0[2], r.Load1[0], r.Load1[1], r.Load1[2], strings.Join(r.Env, " "))
	fmt.Fprintf(&b, "| what | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| creating the Services (%d handed off, %d bound, %d at once) | %s |\n", cfg.N, r.Pool, cfg.Parallel, sec(r.Create))
	fmt.Fprintf(&b, "| first start: process start → /readyz 200 (one list of %d) | %s |\n", cfg.N, sec(r.Start.Ready))
	fmt.Fprintf(&b, "| first start, when ready: VmHWM / VmRSS / RssAnon | %s / %s / %s |\n", mib(r.Start.HWM), mib(r.Start.RSS), mib(r.Start.Anon))
	hp50, hp99, hmax := Quantiles(r.Handoff)
	fmt.Fprintf(&b, "| churn: %d hand-offs and %d deletions over %s | |\n", len(r.Handed), len(r.Deleted), sec(r.ChurnWall))
	fmt.Fprintf(&b, "| hand-off patch answered → 302 by X-Sparkui-Service, p50 / p99 / max | %s / %s / %s |\n", msf(hp50), msf(hp99), msf(hmax))
	fmt.Fprintf(&b, "| redirector CPU per second of churn, churn alone (first %s) | %s |\n", r.Half, perSec(r.CPUChurn, r.Half))
	fmt.Fprintf(&b, "| redirector CPU per second, churn and lookup clients (last %s) | %s |\n", cfg.Churn-r.Half, perSec(r.CPUBoth, cfg.Churn-r.Half))
	lp50, lp99, lmax := Quantiles(r.Lookups)
	fmt.Fprintf(&b, "| lookups by X-Sparkui-Service during the churn (loopback, keep-alive, client included), p50 / p99 / max | %s / %s / %s |\n", msf(lp50), msf(lp99), msf(lmax))
	fmt.Fprintf(&b, "| lookups served | %d in %s: %.0f a second |\n", len(r.Lookups), sec(r.LookupWall), float64(len(r.Lookups))/max(r.LookupWall.Seconds(), 1e-9))
	fmt.Fprintf(&b, "| VmRSS during the churn, max (sampled every 100 ms) | %s |\n", mib(r.RSSMax))
	fmt.Fprintf(&b, "| after the churn: VmHWM / VmRSS / RssAnon | %s / %s / %s |\n", mib(r.AfterChurn.HWM), mib(r.AfterChurn.RSS), mib(r.AfterChurn.Anon))
	if x := r.Expired; x != nil {
		fmt.Fprintf(&b, "| expired watch: API server cut off for %s (10 Services deleted meanwhile); back → relisted (the log's %q), including the Reflector's backoff | %s |\n", x.Cut, afterMsg(x.Listed), sec(x.Back))
		fmt.Fprintf(&b, "| expired watch: the redirector's first connection after the cut (its watch, answered 410) → relisted | %s |\n", sec(x.Relisted))
		fmt.Fprintf(&b, "| expired watch, after the relist: VmHWM since the cut / VmRSS | %s / %s |\n", mib(x.HWM), mib(x.RSS))
	}
	fmt.Fprintf(&b, "| relist (a fresh process lists %s): start → /readyz 200 | %s |\n", strings.TrimPrefix(r.Restart.ReadyzBody, "ok: "), sec(r.Restart.Ready))
	fmt.Fprintf(&b, "| relist, when ready: VmHWM / VmRSS / RssAnon | %s / %s / %s |\n", mib(r.Restart.HWM), mib(r.Restart.RSS), mib(r.Restart.Anon))
	keys := make([]string, 0, len(r.Requests))
	for k := range r.Requests {
		if !isCount(k) {
			keys = append(keys, fmt.Sprintf("%s ×%d", k, r.Requests[k]))
		}
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "| the redirector's API requests, both processes (audit log; a watch is logged when it ends) | %s |\n", strings.Join(keys, ", "))
	fmt.Fprintf(&b, "| errors | %d |\n", r.ErrorCount)
	return b.String()
}

func perSec(cpu, wall time.Duration) string {
	if wall <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms (%.2f %% of a core)", float64(cpu.Microseconds())/1000/wall.Seconds(), 100*cpu.Seconds()/wall.Seconds())
}

// afterMsg is a text log line from its message on (without the time and level).
func afterMsg(line string) string {
	if i := strings.Index(line, "msg="); i >= 0 {
		return strings.TrimSpace(line[i:])
	}
	return line
}
