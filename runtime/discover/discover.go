// Package discover finds the Spark UI among the listening TCP sockets of the Pod's network
// namespace and watches the one it found by its inode: a listening socket keeps its inode for
// its whole life, so while that inode is still listening the UI has not changed and no HTTP
// request is needed.
//
// The sockets come from the kernel's sock_diag netlink interface (Diag: filtered to LISTEN by
// the kernel) or, where that is not available, from /proc/net/tcp and tcp6 read with
// github.com/prometheus/procfs (Table).
package discover

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// tcpListen is the TCP_LISTEN state in /proc/net/tcp's st column.
const tcpListen = 0x0A

// Socket is a listening TCP socket.
type Socket struct {
	Inode uint64
	Port  int
	IP    netip.Addr // local address; unspecified = every address
	V6    bool       // IPv6 socket (listed in /proc/net/tcp6)

	// From sock_diag: what its exact lookup needs.
	ifIndex uint32
	cookie  uint64
}

func (s Socket) String() string {
	return fmt.Sprintf("%s (inode %d)", netip.AddrPortFrom(s.IP, uint16(s.Port)), s.Inode)
}

// DialAddrs are the addresses to reach s from inside its network namespace, best first: the
// loopback address of its family for a socket on every address (and 127.0.0.1 after ::1, for a
// dual-stack socket in a Pod without IPv6 loopback), else its own address.
func (s Socket) DialAddrs() []string {
	p := strconv.Itoa(s.Port)
	switch {
	case s.IP.IsUnspecified() && s.V6:
		return []string{net.JoinHostPort("::1", p), net.JoinHostPort("127.0.0.1", p)}
	case s.IP.IsUnspecified():
		return []string{net.JoinHostPort("127.0.0.1", p)}
	}
	return []string{net.JoinHostPort(s.IP.Unmap().String(), p)}
}

// Source lists the listening TCP sockets of the network namespace the process is in.
type Source interface {
	Name() string
	// Listening returns the listening sockets, IPv4 then IPv6.
	Listening() ([]Socket, error)
	// StillListening reports whether s's inode is still a listening socket on its port.
	StillListening(s Socket) (bool, error)
}

// Open returns the Source for mode: "netlink" (sock_diag), "proc" (procfs at procRoot), or
// "auto": sock_diag when the kernel answers it, else procfs.
func Open(mode, procRoot string) (Source, error) {
	switch mode {
	case "netlink":
		return OpenDiag()
	case "proc":
		return NewTable(procRoot)
	case "auto", "":
		if d, err := OpenDiag(); err == nil {
			return d, nil
		}
		return NewTable(procRoot)
	}
	return nil, fmt.Errorf("unknown socket source %q (auto, netlink or proc)", mode)
}

// Prober is what the Finder asks about a socket (sparkapi.Prober in production).
type Prober interface {
	Probe(ctx context.Context, hostport string) sparkapi.Result
}

// Options tune a Finder.
type Options struct {
	// Ports restricts the candidates to a fixed spark.ui.port and its retries, in the order
	// Spark tries them (which wraps past 65535: see agent.Config.Ports); empty = every
	// listening socket (random port).
	Ports []int
	// Skip are ports never probed, whatever the range: the driver's RPC and block-manager
	// ports (an HTTP request there makes the driver log a "Too large frame" stack trace).
	Skip []int
	// OnVerdict, when set, is called (outside the Finder's lock, from the probing goroutine)
	// each time a socket's verdict changes: for messages that are logged once.
	OnVerdict func(Socket, sparkapi.Result)
	// Parallel probes at most; default 8.
	Parallel int
	// MaxProbes started per pass bounds the work of one pass (a node's namespace under
	// hostNetwork may list thousands of sockets); default 64.
	MaxProbes int
	// Wait is how long a pass waits for the probes it started (default 80 ms): a socket that
	// is slow to answer finishes in the background and counts at a later pass, so it cannot
	// hold up finding the UI on another one.
	Wait time.Duration
}

// Finder runs discovery passes, remembering per socket what it learnt: a socket that is
// another application's UI stays so for its whole life and is never asked again; one that is
// not Spark is asked again with exponential backoff; "starting up" at every pass.
type Finder struct {
	table  Source
	prober Prober
	opts   Options
	now    func() time.Time
	sem    chan struct{}

	rank map[int]int // port → its place in Spark's order (fixed ports)
	skip map[int]bool

	mu     sync.Mutex
	cache  map[uint64]*entry
	passes uint64
}

type entry struct {
	sock     Socket
	result   sparkapi.Result
	next     time.Time
	fails    int
	pass     uint64 // last pass that saw the socket
	inflight bool
	// startingUp: the socket served Spark's starting-up page: a 404 from it later is one of
	// the windows of a starting UI (SparkUI.attachAllHandlers swaps the init handler for the
	// UI's handlers), not "not Spark".
	startingUp bool
}

// NewFinder returns a Finder over table asking prober.
func NewFinder(table Source, prober Prober, opts Options) *Finder {
	if opts.Parallel <= 0 {
		opts.Parallel = 8
	}
	if opts.MaxProbes <= 0 {
		opts.MaxProbes = 64
	}
	if opts.Wait <= 0 {
		opts.Wait = 80 * time.Millisecond
	}
	f := &Finder{table: table, prober: prober, opts: opts, now: time.Now, cache: map[uint64]*entry{},
		sem: make(chan struct{}, opts.Parallel), rank: map[int]int{}, skip: map[int]bool{}}
	for i, p := range opts.Ports {
		if _, dup := f.rank[p]; !dup {
			f.rank[p] = i
		}
	}
	for _, p := range opts.Skip {
		f.skip[p] = true
	}
	return f
}

// Source is where the Finder reads the sockets.
func (f *Finder) Source() Source { return f.table }

func (f *Finder) inRange(port int) bool {
	if f.skip[port] {
		return false
	}
	if len(f.opts.Ports) == 0 {
		return true
	}
	_, ok := f.rank[port]
	return ok
}

// before orders sockets by the order Spark starts UIs in: with a fixed port, its place in
// Spark's range (several SparkContexts in one Pod: the first one started took the first free
// port); with random ports that order cannot be read from the sockets: the lowest port.
func (f *Finder) before(a, b Socket) bool {
	ka, kb := a.Port, b.Port
	if len(f.rank) > 0 {
		ka, kb = f.rank[a.Port], f.rank[b.Port]
	}
	if ka != kb {
		return ka < kb
	}
	return a.Inode < b.Inode
}

// failingReport is how many 5xx answers in a row make a failing REST API worth reporting.
const failingReport = 3

// never is the retry time of a verdict that cannot change for a socket.
var never = time.Unix(1<<62, 0)

func backoff(fails int, base, maxDelay time.Duration) time.Duration {
	d := base
	for i := 1; i < fails && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// Pass reads the socket table, asks the sockets that are due, and returns the lowest-port
// socket known to be this application's UI. A match stays valid while its socket listens: a
// listening socket serves one application for its whole life.
func (f *Finder) Pass(ctx context.Context) (Socket, bool, error) {
	socks, err := f.table.Listening()
	if err != nil {
		return Socket{}, false, err
	}
	f.mu.Lock()
	now := f.now()
	f.passes++
	var due []*entry
	seen := 0
	for _, s := range socks {
		if !f.inRange(s.Port) {
			continue
		}
		seen++
		e := f.cache[s.Inode]
		if e == nil || e.sock.Port != s.Port {
			e = &entry{sock: s}
			f.cache[s.Inode] = e
		}
		e.pass = f.passes
		if !e.inflight && !e.next.After(now) {
			due = append(due, e)
		}
	}
	if len(f.cache) != seen { // some socket is gone: forget it (its inode may be reused)
		for ino, e := range f.cache {
			if e.pass != f.passes {
				delete(f.cache, ino)
			}
		}
	}
	sort.Slice(due, func(i, j int) bool { return f.before(due[i].sock, due[j].sock) })
	if len(due) > f.opts.MaxProbes {
		due = due[:f.opts.MaxProbes]
	}
	for _, e := range due {
		e.inflight = true
	}
	f.mu.Unlock()

	if len(due) > 0 {
		var wg sync.WaitGroup
		for _, e := range due {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.sem <- struct{}{}
				r := f.probeOne(ctx, e.sock)
				<-f.sem
				f.record(e, r)
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		timer := time.NewTimer(f.opts.Wait)
		select {
		case <-done:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}

	if m := f.Matches(); len(m) > 0 {
		return m[0], true, nil
	}
	return Socket{}, false, nil
}

// Matches are the sockets of the last pass known to be this application's UI, first started
// first (see before): more than one means several live UIs in the Pod (two SparkContexts).
func (f *Finder) Matches() []Socket {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Socket
	for _, e := range f.cache {
		if e.pass == f.passes && !e.inflight && e.result.Verdict == sparkapi.Match {
			out = append(out, e.sock)
		}
	}
	sort.Slice(out, func(i, j int) bool { return f.before(out[i], out[j]) })
	return out
}

// AppID is the application id the UI on socket s reported when it was verified as this
// application's (a Match), "" otherwise.
func (f *Finder) AppID(s Socket) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.cache[s.Inode]; e != nil && e.sock.Port == s.Port && e.result.Verdict == sparkapi.Match {
		return e.result.AppID
	}
	return ""
}

// record applies a probe's verdict to its socket.
func (f *Finder) record(e *entry, r sparkapi.Result) {
	f.mu.Lock()
	now := f.now()
	e.inflight = false
	if r.Verdict == sparkapi.NotSpark && r.Status == http.StatusNotFound && e.startingUp {
		r.Verdict = sparkapi.StartingUp
		r.Detail += " after Spark's starting-up page: its handlers are being attached"
	}
	if r.Verdict == sparkapi.StartingUp {
		e.startingUp = true
	}
	// A refusal's detail says what to fix (no credential, a refused one): a new one counts. A
	// failing REST API is reported once it has failed failingReport times in a row: one 5xx
	// while Spark stores the application is no news.
	changed := e.result.Verdict != r.Verdict || (r.Verdict == sparkapi.Denied && e.result.Detail != r.Detail)
	if r.Verdict == sparkapi.Failing {
		if e.result.Verdict != sparkapi.Failing {
			e.fails = 0
		}
		changed = e.fails+1 == failingReport
	}
	e.result = r
	sock := e.sock
	defer func() {
		f.mu.Unlock()
		if changed && f.opts.OnVerdict != nil {
			f.opts.OnVerdict(sock, r)
		}
	}()
	switch r.Verdict {
	case sparkapi.Match:
		e.fails = 0
		e.next = never // ours for the socket's whole life
	case sparkapi.StartingUp:
		e.fails = 0
		e.next = now
	case sparkapi.OtherApp, sparkapi.NotLive:
		// Another application's live UI, a History Server, a finished attempt: a listening
		// socket keeps serving it for its whole life.
		e.next = never
	case sparkapi.Unknown, sparkapi.Failing:
		// Failing used to count as starting up and was asked every 100 ms forever.
		e.fails++
		e.next = now.Add(backoff(e.fails, 100*time.Millisecond, 5*time.Second))
	default: // Denied, NotSpark, TLSMismatch
		e.fails++
		e.next = now.Add(backoff(e.fails, time.Second, time.Minute))
	}
}

func (f *Finder) probeOne(ctx context.Context, s Socket) sparkapi.Result {
	var r sparkapi.Result
	for _, a := range s.DialAddrs() {
		r = f.prober.Probe(ctx, a)
		if !r.Unreachable() {
			break
		}
	}
	return r
}

// Forget drops what the Finder learnt about a socket (the one that was bound, when it is
// lost, so that a socket reusing its inode number is asked afresh).
func (f *Finder) Forget(inode uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.cache, inode)
}
