package scale

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Quantiles are p50, p99 and the maximum of ds.
func Quantiles(ds []time.Duration) (p50, p99, max time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1 // nearest rank
		return s[max0(i)]
	}
	return at(0.50), at(0.99), s[len(s)-1]
}

func max0(i int) int {
	if i < 0 {
		return 0
	}
	return i
}

// PerApp is, for each "verb resource" (and "verb resource code"), the largest and the mean
// count over the applications.
func (r *Result) PerApp() (maxes map[string]int, means map[string]float64) {
	maxes, means = map[string]int{}, map[string]float64{}
	for _, req := range r.Requests {
		for k, n := range req {
			maxes[k] = max(maxes[k], n)
			means[k] += float64(n) / float64(r.N)
		}
	}
	return maxes, means
}

// Report is the run as the Markdown rows docs/performance.md's "At scale" section shows.
func (r *Result) Report(label string) string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
	bp50, bp99, bmax := Quantiles(r.Bind)
	wp50, wp99, wmax := Quantiles(r.Withdraw)
	fmt.Fprintf(&b, "### %s: N = %d, load average at the end %.2f %.2f %.2f, %s\n\n", label, r.N, r.Load[0], r.Load[1], r.Load[2], r.Ended.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "| what | p50 | p99 | max |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| bind after UI ready | %s | %s | %s |\n", ms(bp50), ms(bp99), ms(bmax))
	ep50, ep99, emax := Quantiles(r.Endpoint)
	fmt.Fprintf(&b, "| EndpointSlice holds the Pod after the bind | %s | %s | %s |\n", ms(ep50), ms(ep99), ms(emax))
	fmt.Fprintf(&b, "| withdraw after SIGTERM | %s | %s | %s |\n\n", ms(wp50), ms(wp99), ms(wmax))

	maxes, means := r.PerApp()
	keys := make([]string, 0, len(means))
	for k := range means {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := 0.0
	fmt.Fprintf(&b, "| requests per application (verb resource [code]) | mean | max |\n|---|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | %.2f | %d |\n", k, means[k], maxes[k])
		if isCount(k) {
			total += means[k]
		}
	}
	fmt.Fprintf(&b, "| **all** | %.2f | |\n\n", total)

	var cpu time.Duration
	var rss, rssMax, anon int64
	for i := range r.RuntimeCPU {
		cpu += r.RuntimeCPU[i]
		rss += r.RuntimeRSS[i]
		anon += r.RuntimeAnon[i]
		rssMax = max(rssMax, r.RuntimeRSS[i])
	}
	n := float64(max(r.N, 1))
	wall := r.Ended.Sub(r.Started)
	fmt.Fprintf(&b, "| cost | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| run, first start to last exit | %s |\n", ms(wall))
	fmt.Fprintf(&b, "| kube-apiserver CPU over the run | %s (%.1f ms per application) |\n", ms(r.APIServerCPU), float64(r.APIServerCPU.Milliseconds())/n)
	fmt.Fprintf(&b, "| kube-apiserver RSS at the end / peak | %d MiB / %d MiB |\n", r.APIServerRSS>>20, r.APIServerPeak>>20)
	fmt.Fprintf(&b, "| EndpointSlice events per application (bind + withdrawal) | %.2f |\n", float64(r.SliceEvents)/n)
	fmt.Fprintf(&b, "| runtime CPU per process, start to all bound | %.1f ms (mean) |\n", float64(cpu.Microseconds())/1000/n)
	fmt.Fprintf(&b, "| runtime RSS per process, all bound | %.1f MiB mean, %.1f MiB max |\n", float64(rss)/n/(1<<20), float64(rssMax)/(1<<20))
	fmt.Fprintf(&b, "| runtime anonymous RSS per process (its own memory; the binary's pages are shared) | %.1f MiB mean |\n", float64(anon)/n/(1<<20))
	if r.Restart != nil {
		b.WriteString("\n" + r.Restart.Report(r.N))
	}
	return b.String()
}
