package scale

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// A watch that outlives etcd's compaction: the real 410 path of the running redirector.
//
// With the API server's watch cache, a watch resumes from any resourceVersion still in the
// cache's window, which after 10,000 creations holds thousands of events: no 410 within a
// run. Without it for Services (--watch-cache-sizes=services#0: "the only meaningful size
// setting to supply here is zero, which means to disable watch caching for the associated
// resource", kube-apiserver's flag help), a watch is served by etcd, and a watch from a
// revision etcd has compacted away (--etcd-compaction-interval) gets an ERROR event with 410
// Expired (kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/watcher.go, the
// compacted-revision case of startWatching). The redirector's connection to the API server
// goes through a relay that can be cut: while it is cut the redirector's watch requests are
// refused (connection refused), which client-go's Reflector retries with backoff from the same
// resourceVersion rather than listing (client-go v0.37.2 tools/cache/reflector.go
// isWatchErrorRetriable); once the compaction has passed that revision and the relay is back,
// the watch gets the 410 and the Reflector lists again (reflector.go watch, isExpiredError).

// ExpireArgs are the API server's arguments for a run with Expire set.
var ExpireArgs = map[string][]string{"watch-cache-sizes": {"services#0"}, "etcd-compaction-interval": {"5s"}}

// relay forwards loopback TCP connections to the API server; cut closes them all and stops
// listening (new connections are refused), restore listens again on the same port.
type relay struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
	accepted     time.Time // the first connection since the last restore
}

func startRelay(target string) (*relay, error) {
	r := &relay{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	return r, nil
}

func (r *relay) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			if r.accepted.IsZero() {
				r.accepted = time.Now()
			}
			r.mu.Unlock()
			go r.forward(c)
		}
	}()
}

func (r *relay) forward(c net.Conn) {
	s, err := net.Dial("tcp", r.target)
	if err != nil {
		_ = c.Close()
		return
	}
	r.mu.Lock()
	r.conns[c], r.conns[s] = true, true
	r.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
	_, _ = io.Copy(c, s)
	_ = c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, s)
	r.mu.Unlock()
}

func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.ln.Close()
	for c := range r.conns {
		_ = c.Close()
	}
}

func (r *relay) restore() error {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("the relay's port %s: %w", r.addr, err)
	}
	r.mu.Lock()
	r.accepted = time.Time{}
	r.mu.Unlock()
	r.serve(ln)
	return nil
}

// firstAccepted is when the first connection since the last restore came.
func (r *relay) firstAccepted() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted
}

// relayedKubeconfig is a kubeconfig of cfg's identity whose server is the relay.
func relayedKubeconfig(t testing.TB, c *testcluster.Cluster, cfg *rest.Config, rl *relay) string {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.Host = "https://" + rl.addr // the serving certificate is for 127.0.0.1
	return c.KubeconfigFile(t, cfg)
}

// ExpireResult is what the expired watch cost the running redirector.
type ExpireResult struct {
	Cut        time.Duration // how long the relay was cut
	Back       time.Duration // relay restored → the log's next "listed the UI Services"
	Relisted   time.Duration // the redirector's first connection after the restore (its watch, answered 410) → that line
	HWM, RSS   int64         // VmHWM (reset before the cut through /proc/<pid>/clear_refs) and VmRSS after the relist
	Listed     string        // that log line
	DeletedCut []int         // Services deleted while the relay was cut (seen only by the relist)
}

// The redirector's log lines: its list (runtime/redirect Watcher.replace), and client-go's
// warning when a watch ends with an error that is not 410 (reflector.go watch).
const (
	listedLine = "listed the UI Services"
	watchError = "watch ended with error"
)

// expire cuts the redirector off for d, deletes the next few of old meanwhile, and waits for
// the relist once the relay is back.
func expire(t testing.TB, cs kubernetes.Interface, r *redirector, rl *relay, ns string, d time.Duration, old []int) (*ExpireResult, error) {
	t.Helper()
	res := &ExpireResult{Cut: d}
	log0 := readFile(r.log)
	before, warned := strings.Count(log0, listedLine), strings.Count(log0, watchError)
	// "5" resets the peak resident set to the current one (proc(5), /proc/pid/clear_refs),
	// so VmHWM afterwards is the relist's peak, not the churn's.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", r.pid()), []byte("5"), 0); err != nil {
		return nil, err
	}
	rl.cut()
	ctx := testcluster.Context(t, d+time.Minute)
	for _, j := range old {
		if err := cs.CoreV1().Services(ns).Delete(ctx, histService(j), metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
		res.DeletedCut = append(res.DeletedCut, j)
	}
	time.Sleep(d)
	if err := rl.restore(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	for time.Since(t0) < 2*time.Minute {
		if log := readFile(r.log); strings.Count(log, listedLine) > before {
			res.Back = time.Since(t0)
			res.Relisted = time.Since(rl.firstAccepted())
			m := memSample(r.pid())
			res.HWM, res.RSS = m.HWM, m.RSS
			res.Listed = lastLineWith(log, listedLine)
			// client-go logs an expired watch at V(4) only, and any other error that ends a
			// watch at info: a relist with no such warning is the expired watch's.
			if strings.Count(log, watchError) > warned {
				return res, fmt.Errorf("the watch ended with another error than 410, so the relist is not the expired watch's: %s", lastLineWith(log, watchError))
			}
			return res, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return res, fmt.Errorf("no relist within 2 minutes of the relay's restore (the log has %d %q lines)", before, listedLine)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func lastLineWith(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}
