package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// HistoryConfig is one History redirector run.
type HistoryConfig struct {
	N        int           // handed-off Services when the redirector starts
	Churn    time.Duration // how long applications end and old Services go
	Rate     int           // applications ending a second, and old Services deleted a second
	Clients  int           // loopback clients asking for redirects, each one request at a time
	Parallel int           // Services created at once
	// Env is added to the example Deployment's environment (GOMEMLIMIT=… overrides its 32MiB).
	Env []string
	// Expire, when set, cuts the redirector off the API server for this long after the churn,
	// so that its watch outlives etcd's compaction: the cluster must run with ExpireArgs.
	Expire time.Duration
}

// Sample is the redirector's memory at a point, from /proc/<pid>/status.
type Sample struct {
	Ready      time.Duration // process start → /readyz 200 (starts only)
	HWM, RSS   int64         // VmHWM (peak resident) and VmRSS, bytes
	Anon       int64         // RssAnon: the process's own pages, without the binary's
	ReadyzBody string
}

// HistoryResult is what a run measured.
type HistoryResult struct {
	Cfg          HistoryConfig
	Load0, Load1 [3]float64 // the load average before and after
	Started      time.Time
	Pool         int           // bound Services created for the churn to hand off
	Create       time.Duration // creating the N handed-off and the bound Services
	Start        Sample        // first start: the list of N
	Handoff      []time.Duration
	Handed       []int
	Deleted      []int
	ChurnWall    time.Duration // the churn's first tick → its last hand-off redirected
	CPUChurn     time.Duration // redirector CPU in the first half of the churn (no lookup clients)
	CPUBoth      time.Duration // in the second half (churn and lookup clients)
	Half         time.Duration // how long each half lasted
	RSSMax       int64         // the largest VmRSS sampled during the churn (every 100 ms)
	AfterChurn   Sample        // VmHWM/VmRSS when the churn ended
	Lookups      []time.Duration
	LookupWall   time.Duration
	Restart      Sample   // a fresh process: the Reflector's list path, at N - deleted + handed
	Env          []string // the redirector's environment beyond PATH, KUBECONFIG and POD_NAMESPACE
	Requests     Requests
	Expired      *ExpireResult // with cfg.Expire
	Errors       []string
	ErrorCount   int
	RelistReason string
}

// RunHistory creates cfg.N handed-off UI Services in ns, starts the built redirector bin on
// them, churns, restarts it, and checks that every handed-off Service redirects and every
// deleted one does not. Every failure is an error of t.
func RunHistory(t testing.TB, c *testcluster.Cluster, audit, bin, ns string, cfg HistoryConfig) *HistoryResult {
	t.Helper()
	pool := cfg.Rate * int(cfg.Churn.Seconds()+1) // bound Services the churn hands off
	res := &HistoryResult{Cfg: cfg, Load0: loadAvg(), Started: time.Now(), Pool: pool}
	if pool >= cfg.N {
		t.Fatalf("N = %d Services cannot feed a churn of %d a second for %s", cfg.N, cfg.Rate, cfg.Churn)
	}
	c.EnsureNamespace(t, ns)
	cs := histClient(t, c)
	saCfg, env := redirectorIdentity(t, c, ns)
	kubeconfig := c.KubeconfigFile(t, saCfg)
	var rl *relay
	if cfg.Expire > 0 {
		u, err := url.Parse(c.Config.Host)
		if err != nil {
			t.Fatal(err)
		}
		if rl, err = startRelay(u.Host); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rl.cut)
		kubeconfig = relayedKubeconfig(t, c, saCfg, rl)
	}
	env = append(env, cfg.Env...)
	res.Env = env
	port, err := testcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	health, err := testcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx := testcluster.Context(t, 30*time.Minute)

	t0 := time.Now()
	if err := createServices(ctx, cs, ns, 0, cfg.N, cfg.Parallel, true, port); err != nil {
		t.Fatal(err)
	}
	if err := createServices(ctx, cs, ns, cfg.N, pool, cfg.Parallel, false, port); err != nil {
		t.Fatal(err)
	}
	res.Create = time.Since(t0)
	t.Logf("created %d handed-off and %d bound UI Services in %s", cfg.N, pool, res.Create.Round(time.Millisecond))

	logFile := filepath.Join(t.TempDir(), "redirector.log")
	r := startOrFail(t, bin, ns, kubeconfig, env, port, health, logFile, &res.Start)
	checkReadyz(t, res.Start.ReadyzBody, cfg.N)

	// The churn: hand-offs of the bound Services, deletions of the oldest handed-off ones;
	// loopback lookups of the rest in the second half.
	var errs errorList
	bound, old := make([]int, pool), make([]int, pool)
	for k := range pool {
		bound[k], old[k] = cfg.N+k, k
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for ; sampleCtx.Err() == nil; time.Sleep(100 * time.Millisecond) {
			if _, rss, err := procStat(r.pid()); err == nil {
				res.RSSMax = max(res.RSSMax, rss)
			}
		}
	}()
	cpu0, _, _ := procStat(r.pid())
	res.Half = cfg.Churn / 2
	var cpuHalf time.Duration
	var lookupDone sync.WaitGroup
	lookupDone.Add(1)
	go func() {
		defer lookupDone.Done()
		time.Sleep(res.Half)
		cpuHalf, _, _ = procStat(r.pid())
		lctx, cancel := context.WithTimeout(ctx, cfg.Churn-res.Half)
		defer cancel()
		l0 := time.Now()
		res.Lookups = lookups(lctx, base, cfg.Clients, pool, cfg.N, &errs)
		res.LookupWall = time.Since(l0)
	}()
	cr := churn(ctx, cs, ns, base, port, cfg.Rate, cfg.Churn, bound, old, &errs)
	lookupDone.Wait()
	cpu1, _, _ := procStat(r.pid())
	stopSampling()
	sampler.Wait()
	res.CPUChurn, res.CPUBoth = cpuHalf-cpu0, cpu1-cpuHalf
	res.Handoff, res.Handed, res.Deleted, res.ChurnWall = cr.handoff, cr.handed, cr.deleted, cr.finished.Sub(cr.issued)
	res.AfterChurn = memSample(r.pid())

	// Correctness: every deleted Service stops redirecting (within a coalesced rebuild and the
	// watch's lag), every handed-off one redirects to its page.
	verify(t, base, res, cfg.N, pool, &errs)

	// The running process's relist after its watch expired; the Services deleted meanwhile
	// (the last ten, asked for by no lookup) are seen by that list only.
	if cfg.Expire > 0 {
		gone := []int{cfg.N - 1, cfg.N - 2, cfg.N - 3, cfg.N - 4, cfg.N - 5, cfg.N - 6, cfg.N - 7, cfg.N - 8, cfg.N - 9, cfg.N - 10}
		x, err := expire(t, cs, r, rl, ns, cfg.Expire, gone)
		if err != nil {
			errs.add("expired watch: %v", err)
		}
		if x != nil {
			res.Expired = x
			res.Deleted = append(res.Deleted, x.DeletedCut...)
		}
		verify(t, base, res, cfg.N, pool, &errs)
	}

	// Relist cost: a fresh process lists the namespace as the Reflector does after its watch
	// expired (a 410), with nothing of the old table; the old process stops first.
	if code := r.stop(); code != 0 {
		errs.add("redirector exit %d on SIGTERM", code)
	}
	r = startOrFail(t, bin, ns, kubeconfig, env, port, health, logFile, &res.Restart)
	checkReadyz(t, res.Restart.ReadyzBody, cfg.N-len(res.Deleted)+len(res.Handed))
	verify(t, base, res, cfg.N, pool, &errs)
	if code := r.stop(); code != 0 {
		errs.add("redirector exit %d on SIGTERM", code)
	}
	res.Load1 = loadAvg()
	res.Requests = redirectorRequests(t, audit, ns)
	res.Errors, res.ErrorCount = errs.first, errs.n
	if errs.n > 0 {
		t.Errorf("%d errors, e.g.:\n%s", errs.n, joinLines(errs.first))
	}
	return res
}

// startOrFail starts the redirector and waits until it is ready (2 minutes at most: the first
// list of 10,000 Services on a loaded machine), recording its start into s.
func startOrFail(t testing.TB, bin, ns, kubeconfig string, env []string, port, health int, logFile string, s *Sample) *redirector {
	t.Helper()
	start := time.Now()
	r, err := startRedirector(bin, ns, kubeconfig, env, port, health, logFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	ready, body, err := r.waitReady(start, 2*time.Minute)
	if err != nil {
		out, _ := os.ReadFile(logFile)
		t.Fatalf("%v\n%s", err, tail(string(out), 2000))
	}
	*s = memSample(r.pid())
	s.Ready, s.ReadyzBody = ready, body
	return r
}

func memSample(pid int) Sample {
	return Sample{HWM: statusKB(pid, "VmHWM"), RSS: statusKB(pid, "VmRSS"), Anon: statusKB(pid, "RssAnon")}
}

var readyzCount = regexp.MustCompile(`^ok: (\d+) handed-off Services$`)

// checkReadyz: /readyz counts want handed-off Services (the table of the first list).
func checkReadyz(t testing.TB, body string, want int) {
	t.Helper()
	if m := readyzCount.FindStringSubmatch(body); m == nil || m[1] != strconv.Itoa(want) {
		t.Errorf("/readyz says %q, want %d handed-off Services", body, want)
	}
}

// verify asks for every Service of the run once: the deleted ones must answer 404 (waiting up
// to 10 s for the redirector to see the last deletions), the rest 302 to their page.
func verify(t testing.TB, base string, res *HistoryResult, n, pool int, errs *errorList) {
	t.Helper()
	c := noRedirect(1)
	gone := map[int]bool{}
	for _, j := range res.Deleted {
		gone[j] = true
	}
	handed := map[int]bool{}
	for _, i := range res.Handed {
		handed[i] = true
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := range n + pool {
		code, loc, err := lookup(c, base, i)
		for gone[i] && code != http.StatusNotFound && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			code, loc, err = lookup(c, base, i)
		}
		switch {
		case err != nil:
			errs.add("verify %s: %v", histService(i), err)
		case gone[i] && code != http.StatusNotFound:
			errs.add("%s was deleted: the redirector answers %d %q, want 404", histService(i), code, loc)
		case (i < n && !gone[i] || handed[i]) && (code != http.StatusFound || loc != histWantLocation(i)):
			errs.add("%s is handed off: the redirector answers %d %q, want 302 to %s", histService(i), code, loc, histWantLocation(i))
		case i >= n && !handed[i] && code != http.StatusNotFound:
			errs.add("%s is bound: the redirector answers %d %q, want 404", histService(i), code, loc)
		}
	}
}

// redirectorRequests counts the redirector's requests in the audit log (its ServiceAccount's)
// by verb, resource and code; a list that continues another (a page after the first) also as
// "list services (page)", a request for no resource by its path. A watch is logged when it
// ends.
func redirectorRequests(t testing.TB, audit, ns string) Requests {
	t.Helper()
	got := Requests{}
	user := "system:serviceaccount:" + ns + ":sparkui-history-redirector"
	f, err := os.Open(audit)
	if err != nil {
		t.Error(err)
		return got
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stage, Verb, RequestURI string
			User                    struct{ Username string }
			ObjectRef               struct{ Resource string }
			ResponseStatus          struct{ Code int }
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" || ev.User.Username != user {
			continue
		}
		res := ev.ObjectRef.Resource
		if res == "" {
			res = strings.SplitN(ev.RequestURI, "?", 2)[0]
		}
		got[ev.Verb+" "+res]++
		got[fmt.Sprintf("%s %s %d", ev.Verb, res, ev.ResponseStatus.Code)]++
		if ev.Verb == "list" && strings.Contains(ev.RequestURI, "continue=") {
			got["list "+res+" (page)"]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Error(err)
	}
	return got
}

// buildRuntime builds sparkui-runtime alone, as Build does.
func buildRuntime(t testing.TB) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sparkui-runtime")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./runtime")
	cmd.Dir = moduleDir(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./runtime: %v\n%s", err, msg)
	}
	return out
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func joinLines(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "  " + s + "\n"
	}
	return out
}
