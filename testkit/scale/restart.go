package scale

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// An API server restart in the middle of a run's starts (Config.RestartAPIServer). The first
// quarter of the applications' UIs come up after Config.Startup and bind; once they are bound
// kube-apiserver is killed, and the other three quarters' UIs come up together in the middle
// of the outage: their binds fail from the same instant, which is when retries that are not
// spread come back together. After the outage kube-apiserver starts again on the same address
// and etcd (testcluster.StartAPIServer) and the run goes on: every application bound, then
// withdrawn.
//
// What it measures: the runtimes' requests per second arriving at the API server after it is
// back (its audit log), each runtime's connection attempts while it was away (they never
// reach the audit log: the relay of the Pod networks counts them, podnet.ObserveAPIDials),
// each runtime's requests after it is back, and how long after it was back each application
// was bound.

// RestartResult is what an API server restart measured.
type RestartResult struct {
	Outage           time.Duration            // the pause asked between the kill and the new start
	Down, Start, Up  time.Time                // killed; started again; healthy again
	Early, Late      int                      // applications whose UI came up before the outage; in it
	BoundBefore      int                      // applications bound when it was killed
	PerSecond        []int                    // the runtimes' requests received in each second from Start
	OutageDials      map[string]int           // application → connections its Pod network opened from Down to Up
	DialsPerSecond   []int                    // the runtimes' connection attempts in each second from Down
	AfterRequests    map[string]int           // application → requests received from Start to the SIGTERMs
	Forbidden        int                      // of those, answered 403 (the new API server's authorizer not ready)
	ForbiddenReason  string                   // the authorizer's reason for the first 403
	BoundAfter       map[string]time.Duration // application bound after the restart → its bind's arrival after Start
	UnboundAfterDown []string                 // applications with no applied bind after Down though not bound before
}

// lateStartup is how much later than Startup the UIs of the late applications come up: the
// middle of the outage, once the early quarter had 5 s to bind after every process started
// (starting them took 4–6 s for 100 and 16 s for 200 on the loaded 2-core machine; with 5 s
// in all, 199 of 200 were bound before the kill).
func lateStartup(cfg Config) time.Duration {
	return 5*time.Second + cfg.RestartAPIServer/2 + time.Duration(cfg.N)*100*time.Millisecond
}

// attemptsWithin is the most requests a runtime's reconcile loop can start in a window of
// length d while every one fails at once with a transient error (the API server unreachable):
// the first, then one after each backoff step, 200 ms doubling up to 10 s (runtime/agent/
// config.go, Config.defaults: Backoff). Jitter only lengthens a step (k8s.io/apimachinery
// wait.Jitter adds up to Jitter×step), so the unjittered steps give the most.
func attemptsWithin(d time.Duration) int { return stepsWithin(d, 200*time.Millisecond, 10*time.Second) }

// forbiddenAttemptsWithin is the same for a 403, which the runtime reports as an RBAC failure
// and retries on its FatalBackoff: 1 s doubling up to 30 s.
func forbiddenAttemptsWithin(d time.Duration) int { return stepsWithin(d, time.Second, 30*time.Second) }

func stepsWithin(d, step, limit time.Duration) int {
	n, sum := 1, time.Duration(0)
	for sum+step <= d {
		sum += step
		n++
		step = min(2*step, limit)
	}
	return n
}

// early is how many applications' UIs come up before the outage.
func early(n int) int { return max(1, n/4) }

// dialLog collects the Pod networks' connections to the API server.
type dialLog struct {
	mu    sync.Mutex
	dials []dial
}

type dial struct {
	pid int
	at  time.Time
}

func (d *dialLog) note(pid int, at time.Time, _ error) {
	d.mu.Lock()
	d.dials = append(d.dials, dial{pid, at})
	d.mu.Unlock()
}

// restartAPIServer waits until the early applications are bound and their run reached the
// stop time, kills kube-apiserver, waits for the outage and starts it again.
func restartAPIServer(c *testcluster.Cluster, cfg Config, obs *observer, apps []App, started time.Time, beforeKill func()) (*RestartResult, error) {
	rr := &RestartResult{Outage: cfg.RestartAPIServer, Early: early(len(apps))}
	deadline := time.Now().Add(cfg.Timeout)
	for boundCount(obs, apps[:rr.Early]) < rr.Early {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("restart: the early %d applications not bound after %s", rr.Early, cfg.Timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Until(started.Add(cfg.Startup + lateStartup(cfg) - cfg.RestartAPIServer/2)))
	rr.BoundBefore = boundCount(obs, apps)
	beforeKill()
	rr.Down = time.Now()
	if err := c.StopAPIServer(); err != nil {
		return nil, err
	}
	time.Sleep(time.Until(rr.Down.Add(cfg.RestartAPIServer)))
	rr.Start = time.Now()
	if err := c.StartAPIServer(); err != nil {
		return nil, err
	}
	rr.Up = time.Now()
	return rr, nil
}

func boundCount(obs *observer, apps []App) int {
	n := 0
	for _, a := range apps {
		if b, _ := obs.times(a.UIService()); !b.IsZero() {
			n++
		}
	}
	return n
}

// measure fills rr from the dials, the audit log and the pods: until is when the SIGTERMs
// began (the withdrawals are not the restart's).
func (rr *RestartResult) measure(dl *dialLog, audit, ns string, running []*pod, until time.Time) error {
	appOfPID, appOfUser := map[int]string{}, map[string]string{}
	rr.OutageDials, rr.AfterRequests, rr.BoundAfter = map[string]int{}, map[string]int{}, map[string]time.Duration{}
	for _, p := range running {
		p.mu.Lock()
		if !p.ready.Before(rr.Down) && p.ready.Before(rr.Up) {
			rr.Late++
		}
		p.mu.Unlock()
		appOfPID[p.cmd.Process.Pid] = p.app.AppID
		appOfUser["system:serviceaccount:"+ns+":"+p.app.ServiceAccount] = p.app.AppID
		rr.OutageDials[p.app.AppID] = 0
	}
	dl.mu.Lock()
	for _, d := range dl.dials {
		if app, ok := appOfPID[d.pid]; ok && !d.at.Before(rr.Down) && d.at.Before(rr.Up) {
			rr.OutageDials[app]++
			rr.DialsPerSecond = count(rr.DialsPerSecond, d.at.Sub(rr.Down))
		}
	}
	dl.mu.Unlock()
	boundBefore := map[string]bool{}
	err := testcluster.ReadAudit(audit, func(ev testcluster.AuditEvent) {
		app, ok := appOfUser[ev.Username]
		if !ok {
			return
		}
		bind := ev.Verb == "patch" && ev.Resource == "services" && ev.Code/100 == 2
		switch {
		case ev.Received.Before(rr.Down):
			boundBefore[app] = boundBefore[app] || bind
		case ev.Received.Before(until) && !ev.Received.Before(rr.Start):
			rr.AfterRequests[app]++
			rr.PerSecond = count(rr.PerSecond, ev.Received.Sub(rr.Start))
			if _, seen := rr.BoundAfter[app]; bind && !seen && !boundBefore[app] {
				rr.BoundAfter[app] = ev.Received.Sub(rr.Start)
			}
			if ev.Code == 403 {
				if rr.Forbidden++; rr.ForbiddenReason == "" {
					rr.ForbiddenReason = ev.Reason
				}
			}
		}
	})
	for _, p := range running {
		if _, ok := rr.BoundAfter[p.app.AppID]; !ok && !boundBefore[p.app.AppID] {
			rr.UnboundAfterDown = append(rr.UnboundAfterDown, p.app.AppID)
		}
	}
	sort.Strings(rr.UnboundAfterDown)
	return err
}

// count adds one to the second of perSecond that d falls in.
func count(perSecond []int, d time.Duration) []int {
	s := int(d / time.Second)
	for len(perSecond) <= s {
		perSecond = append(perSecond, 0)
	}
	perSecond[s]++
	return perSecond
}

// Peak is the most requests received in one second after the restart, and which second.
func (rr *RestartResult) Peak() (n, second int) {
	for s, c := range rr.PerSecond {
		if c > n {
			n, second = c, s
		}
	}
	return n, second
}

// Report is the restart's part of the run's report.
func (rr *RestartResult) Report(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| API server restart | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| outage: killed to healthy again (pause asked %s, then kube-apiserver's own start) | %.1f s (start took %.1f s) |\n",
		rr.Outage, rr.Up.Sub(rr.Down).Seconds(), rr.Up.Sub(rr.Start).Seconds())
	fmt.Fprintf(&b, "| applications bound when it went away / UIs up in the outage | %d / %d |\n", rr.BoundBefore, rr.Late)
	d50, d99, dmax := intQuantiles(rr.OutageDials, n)
	fmt.Fprintf(&b, "| connection attempts per runtime while it was away (p50 / p99 / max; its backoff allows %d) | %d / %d / %d |\n", attemptsWithin(rr.Up.Sub(rr.Down)), d50, d99, dmax)
	a50, a99, amax := intQuantiles(rr.AfterRequests, n)
	fmt.Fprintf(&b, "| requests per runtime from the new start to the SIGTERMs (p50 / p99 / max) | %d / %d / %d |\n", a50, a99, amax)
	fmt.Fprintf(&b, "| of them answered 403 while the new API server's authorizer was not ready | %d (%q) |\n", rr.Forbidden, rr.ForbiddenReason)
	peak, at := rr.Peak()
	fmt.Fprintf(&b, "| peak requests per second from the new start | %d in second %d (%.2f per application) |\n", peak, at, float64(peak)/float64(max(n, 1)))
	var bound []time.Duration
	for _, d := range rr.BoundAfter {
		bound = append(bound, d)
	}
	b50, b99, bmax := Quantiles(bound)
	fmt.Fprintf(&b, "| bind applied after the new start, %d applications not bound before (p50 / p99 / max) | %.1f s / %.1f s / %.1f s |\n",
		len(bound), b50.Seconds(), b99.Seconds(), bmax.Seconds())
	fmt.Fprintf(&b, "\nconnection attempts per second from the kill: %s\n", histogram(rr.DialsPerSecond))
	fmt.Fprintf(&b, "\nrequests per second from the new start: %s\n", histogram(rr.PerSecond))
	return b.String()
}

// intQuantiles are p50, p99 and the maximum of m's values, counting n-len(m) zeros.
func intQuantiles(m map[string]int, n int) (p50, p99, max int) {
	ds := make([]time.Duration, 0, n)
	for _, v := range m {
		ds = append(ds, time.Duration(v))
	}
	for range n - len(m) {
		ds = append(ds, 0)
	}
	a, b, c := Quantiles(ds)
	return int(a), int(b), int(c)
}

// histogram is "second:count" for each second, e.g. "0:0 1:3 2:17".
func histogram(perSecond []int) string {
	f := make([]string, len(perSecond))
	for s, c := range perSecond {
		f[s] = fmt.Sprintf("%d:%d", s, c)
	}
	return strings.Join(f, " ")
}
