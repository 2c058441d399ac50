package scale

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/podnet"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Config is one run: N applications started in a burst (Interval 0) or one every Interval,
// all ended together by SIGTERM.
type Config struct {
	N        int
	First    int           // the first application's index (runs sharing a cluster differ)
	Interval time.Duration // 0: a burst
	Startup  time.Duration // the stand-in UI answers "starting up" this long (Spark's start)
	// Timeout bounds each phase (all bound, all withdrawn and exited).
	Timeout time.Duration
	// RestartAPIServer, when > 0, kills kube-apiserver in the middle of the starts and starts
	// it again this long after (restart.go): the first quarter of the UIs come up before,
	// the others in the middle of the outage.
	RestartAPIServer time.Duration
}

// Result is what a run measured.
type Result struct {
	N              int
	Bind, Withdraw []time.Duration // per application: bound after UI-ready, withdrawn after SIGTERM
	Endpoint       []time.Duration // per application: its EndpointSlice holds the Pod after the bind
	Requests       map[string]Requests
	Unanswered     map[string]int // application → Service patches it may not have heard back about (auditRequests)
	SliceEvents    int            // EndpointSlice events of the UI Services over the run
	APIServerCPU   time.Duration  // over the run, from the first start to the last exit
	APIServerRSS   int64          // at the end
	APIServerPeak  int64          // VmHWM at the end
	RuntimeCPU     []time.Duration
	RuntimeRSS     []int64
	RuntimeAnon    []int64        // RssAnon: the memory each runtime adds
	LeftBound      []string       // UI Services still selecting their application at the end
	SliceEndpoints map[string]int // UI Service → ready endpoints at the end
	SlicePeak      map[string]int // UI Service → most ready endpoints at once
	Load           [3]float64     // the load average when the run ended
	Started, Ended time.Time
	FailedToBind   []string       // applications whose UI never said ready
	Restart        *RestartResult // Config.RestartAPIServer
}

// Run runs cfg on c (whose audit log is at audit) in namespace ns.
func Run(t testing.TB, c *testcluster.Cluster, audit string, bins Bins, ns string, cfg Config) *Result {
	t.Helper()
	c.EnsureNamespace(t, ns)
	apps := make([]App, cfg.N)
	for i := range apps {
		apps[i] = NewApp(cfg.First + i)
	}
	out := Render(t, bins.Fn, Input(t, ns, cfg.First, cfg.N))
	props, err := properties(out, ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureNode(testcluster.Context(t, time.Minute), c); err != nil {
		t.Fatal(err)
	}
	pods := Apply(t, c, out, 16)
	if len(pods) != cfg.N {
		t.Fatalf("%d driver Pods rendered, want %d", len(pods), cfg.N)
	}
	if err := podnet.CheckUnshare(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	sock, err := podnet.APIRelay(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	// Each application's Pod is Ready with its address, and its ServiceAccount has a
	// kubeconfig, before anything starts: the run times the runtimes, not the setup.
	specs := make([]podSpec, cfg.N)
	ctx := testcluster.Context(t, cfg.Timeout)
	for i, a := range apps {
		p := pods[a.PodName()]
		if p == nil {
			t.Fatalf("no rendered Pod %s", a.PodName())
		}
		if pods[a.PodName()], err = Ready(ctx, c, p, PodIP(a.Index)); err != nil {
			t.Fatalf("pod %s status: %v", p.Name, err)
		}
		dir, err := os.MkdirTemp("", "sui-scale")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		startup := cfg.Startup
		if cfg.RestartAPIServer > 0 && i >= early(cfg.N) {
			startup += lateStartup(cfg)
		}
		specs[i] = podSpec{bins: bins, dir: dir, apiAddr: u.Host, apiSock: sock, startup: startup,
			kubeconfig: c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, a.ServiceAccount)),
			props:      props[fmt.Sprintf("spark-drv-%016x-conf-map", a.Index)]}
		if specs[i].props == "" {
			t.Fatalf("no rendered spark.properties for %s", a.AppID)
		}
	}

	obs := newObserver(apps)
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	started := make(chan struct{})
	go obs.run(watchCtx, c.Client, ns, started)
	<-started

	apiPID := c.APIServerPID()
	apiCPU0, _, _ := procStat(apiPID)
	r := &Result{N: cfg.N, Requests: map[string]Requests{}, SliceEndpoints: map[string]int{}, SlicePeak: map[string]int{}, Started: time.Now()}
	dials := &dialLog{}
	defer podnet.ObserveAPIDials(dials.note)()

	running := make([]*pod, cfg.N)
	var wg sync.WaitGroup
	var startErr error
	var errMu sync.Mutex
	for i, a := range apps {
		if cfg.Interval > 0 && i > 0 {
			time.Sleep(cfg.Interval)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := startPod(a, pods[a.PodName()], specs[i])
			if err != nil {
				errMu.Lock()
				startErr = err
				errMu.Unlock()
				return
			}
			running[i] = p
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, p := range running {
			if p != nil {
				p.kill()
			}
		}
	})
	if startErr != nil {
		t.Fatal(startErr)
	}

	t.Logf("%s: %d applications started in %s", ns, cfg.N, time.Since(r.Started).Round(time.Millisecond))
	var restartErr error
	restarted := make(chan struct{})
	var apiCPUBefore time.Duration // the killed kube-apiserver's CPU time, up to the kill
	if cfg.RestartAPIServer > 0 {
		go func() {
			defer close(restarted)
			stopped := func() { apiCPUBefore, _, _ = procStat(apiPID) }
			r.Restart, restartErr = restartAPIServer(c, cfg, obs, apps, r.Started, stopped)
		}()
	} else {
		close(restarted)
	}
	// Phase 1: every application bound.
	waitAll(t, cfg.Timeout, "every application bound", func() []string {
		var missing []string
		for _, p := range running {
			if b, _ := obs.times(p.app.UIService()); b.IsZero() {
				missing = append(missing, p.app.UIService())
			}
		}
		return missing
	}, running)
	for _, p := range running {
		p.sample()
	}

	<-restarted
	if restartErr != nil {
		t.Fatal(restartErr)
	}
	t.Logf("%s: every application bound %s after the first start", ns, time.Since(r.Started).Round(time.Millisecond))
	// An application runs for a while: its UI Service's EndpointSlice gets the Pod's address
	// (the EndpointSlice controller's work) before it ends.
	waitAll(t, cfg.Timeout, "every UI Service's EndpointSlice to hold its Pod", func() []string {
		var missing []string
		for _, p := range running {
			if obs.endpointAt(p.app.UIService()).IsZero() {
				missing = append(missing, p.app.UIService())
			}
		}
		return missing
	}, running)
	t.Logf("%s: every EndpointSlice filled %s after the first start", ns, time.Since(r.Started).Round(time.Millisecond))
	// Phase 2: the end, a burst of SIGTERMs.
	sigterms := time.Now()
	for _, p := range running {
		go p.term()
	}
	waitAll(t, cfg.Timeout, "every application withdrawn and its Pod ended", func() []string {
		var missing []string
		for _, p := range running {
			_, w := obs.times(p.app.UIService())
			select {
			case <-p.done:
				if w.IsZero() {
					missing = append(missing, p.app.UIService()+" (exited, not withdrawn)")
				}
			default:
				missing = append(missing, p.app.UIService())
			}
		}
		return missing
	}, running)
	r.Ended = time.Now()
	t.Logf("%s: every application withdrawn and ended %s after the first start", ns, r.Ended.Sub(r.Started).Round(time.Millisecond))
	if r.Restart != nil { // the CPU of both processes; the memory of the new one
		apiCPU0 -= apiCPUBefore
		apiPID = c.APIServerPID()
	}
	apiCPU1, apiRSS, _ := procStat(apiPID)
	r.APIServerCPU, r.APIServerRSS, r.APIServerPeak = apiCPU1-apiCPU0, apiRSS, statusKB(apiPID, "VmHWM")

	for _, p := range running {
		b, w := obs.times(p.app.UIService())
		p.mu.Lock()
		r.Bind = append(r.Bind, b.Sub(p.ready))
		r.Withdraw = append(r.Withdraw, w.Sub(p.sigterm))
		r.Endpoint = append(r.Endpoint, obs.endpointAt(p.app.UIService()).Sub(b))
		r.RuntimeCPU = append(r.RuntimeCPU, p.runtimeCPU)
		r.RuntimeRSS = append(r.RuntimeRSS, p.runtimeRSS)
		r.RuntimeAnon = append(r.RuntimeAnon, p.runtimeAnon)
		if p.ready.IsZero() {
			r.FailedToBind = append(r.FailedToBind, p.app.UIService()+": the UI never said ready")
		}
		p.mu.Unlock()
	}
	// The EndpointSlice controller follows the withdrawals on its own clock: wait for it.
	testcluster.WaitFor(t, cfg.Timeout, "the UI Services' EndpointSlices to empty", func() (bool, string) {
		n := 0
		for _, a := range apps {
			n += obs.endpoints(a.UIService())
		}
		return n == 0, fmt.Sprintf("%d endpoints left", n)
	})
	time.Sleep(time.Second) // a last change in flight would show here
	obs.mu.Lock()
	for _, a := range apps {
		r.SliceEvents += obs.sliceEvts[a.UIService()]
		n := 0
		for _, e := range obs.slices[a.UIService()] {
			n += e
		}
		r.SliceEndpoints[a.UIService()] = n
		r.SlicePeak[a.UIService()] = obs.peak[a.UIService()]
	}
	obs.mu.Unlock()

	list, err := c.Client.CoreV1().Services(ns).List(testcluster.Context(t, time.Minute), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if strings.HasSuffix(s.Name, "-ui-svc") && s.Spec.Selector[names.WithdrawnSelectorKey] == "" {
			r.LeftBound = append(r.LeftBound, fmt.Sprintf("%s selector %v", s.Name, s.Spec.Selector))
		}
	}
	if r.Requests, r.Unanswered, err = auditRequests(audit, ns, apps); err != nil {
		t.Fatal(err)
	}
	if r.Restart != nil {
		if err := r.Restart.measure(dials, audit, ns, running, sigterms); err != nil {
			t.Fatal(err)
		}
	}
	r.Load = loadAvg()
	return r
}

// waitAll polls missing until it is empty, failing after timeout with the first missing ones
// and the last lines of their Pods.
func waitAll(t testing.TB, timeout time.Duration, what string, missing func() []string, pods []*pod) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m := missing()
		if len(m) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, p := range pods {
				if len(m) > 0 && strings.HasPrefix(m[0], p.app.UIService()) {
					fmt.Fprintf(&b, "\n--- %s ---\n%s", p.app.UIService(), p.lastLines())
				}
			}
			sort.Strings(m)
			t.Fatalf("timed out after %s waiting for %s: %d missing, e.g. %s%s", timeout, what, len(m), strings.Join(m[:min(5, len(m))], ", "), b.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loadAvg is the machine's 1, 5 and 15-minute load averages.
func loadAvg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		_, _ = fmt.Sscanf(string(b), "%f %f %f", &l[0], &l[1], &l[2])
	}
	return l
}
