package discover

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/sparkapi"
)

const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

// line is one /proc/net/tcp line: addr is the kernel's hex form.
func line(i int, addr string, port int, state int, inode uint64) string {
	return fmt.Sprintf("%4d: %s:%04X 00000000:0000 %02X 00000000:00000000 00:00000000 00000000   185        0 %d 1 0000000000000000 100 0 0 10 0\n",
		i, addr, port, state, inode)
}

func procDir(t testing.TB, tcp, tcp6 string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "net", "tcp"), []byte(header+tcp), 0o644); err != nil {
		t.Fatal(err)
	}
	if tcp6 != "" {
		if err := os.WriteFile(filepath.Join(dir, "net", "tcp6"), []byte(header+tcp6), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	any4   = "00000000"
	lo4    = "0100007F"                         // 127.0.0.1
	pod4   = "0701F40A"                         // 10.244.1.7
	any6   = "00000000000000000000000000000000" // ::
	lo6    = "00000000000000000000000001000000" // ::1
	estab  = 0x01
	listen = 0x0A
)

func TestListening(t *testing.T) {
	dir := procDir(t,
		line(0, any4, 4040, listen, 100)+line(1, pod4, 7078, listen, 101)+line(2, lo4, 4040, estab, 102),
		line(0, any6, 4041, listen, 200)+line(1, lo6, 9000, listen, 201)+line(2, lo6, 4041, estab, 202))
	tab, err := NewTable(dir)
	if err != nil {
		t.Fatal(err)
	}
	socks, err := tab.Listening()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range socks {
		got = append(got, fmt.Sprintf("%s v6=%t %v", s, s.V6, s.DialAddrs()))
	}
	want := []string{
		"0.0.0.0:4040 (inode 100) v6=false [127.0.0.1:4040]",
		"10.244.1.7:7078 (inode 101) v6=false [10.244.1.7:7078]",
		"[::]:4041 (inode 200) v6=true [[::1]:4041 127.0.0.1:4041]",
		"[::1]:9000 (inode 201) v6=true [[::1]:9000]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, tc := range []struct {
		s    Socket
		want bool
	}{
		{socks[0], true},
		{socks[2], true},
		{Socket{Inode: 102, Port: 4040}, false},           // established, not listening
		{Socket{Inode: 100, Port: 4040, V6: true}, false}, // other family
		{Socket{Inode: 999, Port: 4040}, false},           // gone
		{Socket{Inode: 100, Port: 4041}, false},           // inode reused on another port
	} {
		if got, err := tab.StillListening(tc.s); err != nil || got != tc.want {
			t.Errorf("StillListening(%s v6=%t) = %t, %v", tc.s, tc.s.V6, got, err)
		}
	}
}

func TestNoIPv6(t *testing.T) {
	tab, err := NewTable(procDir(t, line(0, any4, 4040, listen, 100), ""))
	if err != nil {
		t.Fatal(err)
	}
	socks, err := tab.Listening()
	if err != nil || len(socks) != 1 {
		t.Fatalf("%v %v", socks, err)
	}
	if ok, err := tab.StillListening(Socket{Inode: 1, V6: true}); ok || err != nil {
		t.Fatalf("%t %v", ok, err)
	}
}

func TestBrokenTable(t *testing.T) {
	tab, err := NewTable(procDir(t, "garbage line\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Listening(); err == nil {
		t.Fatal("no error on a broken table")
	}
	tab, _ = NewTable(t.TempDir())
	if _, err := tab.Listening(); err == nil {
		t.Fatal("no error without a table")
	}
}

// TestRealProc finds a real listening socket of this process's network namespace.
func TestRealProc(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			if network == "tcp6" {
				continue // no IPv6 here
			}
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		tab, err := NewTable("")
		if err != nil {
			t.Fatal(err)
		}
		socks, err := tab.Listening()
		if err != nil {
			t.Fatal(err)
		}
		var found *Socket
		for i, s := range socks {
			if s.Port == port && s.V6 == (network == "tcp6") {
				found = &socks[i]
			}
		}
		if found == nil || found.Inode == 0 {
			t.Fatalf("%s port %d not in the table", network, port)
		}
		if ok, err := tab.StillListening(*found); !ok || err != nil {
			t.Fatalf("StillListening: %t %v", ok, err)
		}
		_ = l.Close()
		if ok, err := tab.StillListening(*found); ok || err != nil {
			t.Fatalf("after close: StillListening: %t %v", ok, err)
		}
	}
}

// stubProber answers from a map by port and counts the questions; a port in hang blocks
// until its channel is closed.
type stubProber struct {
	mu      sync.Mutex
	answers map[string]sparkapi.Verdict // by hostport
	status  map[string]int              // HTTP status of the answer, by hostport
	asked   map[string]int
	hang    map[string]chan struct{}
}

func (p *stubProber) Probe(ctx context.Context, hostport string) sparkapi.Result {
	p.mu.Lock()
	h := p.hang[hostport]
	p.mu.Unlock()
	if h != nil {
		select {
		case <-h:
		case <-ctx.Done():
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asked == nil {
		p.asked = map[string]int{}
	}
	p.asked[hostport]++
	v, ok := p.answers[hostport]
	if !ok {
		return sparkapi.Result{Verdict: sparkapi.Unknown, Detail: "connection refused"}
	}
	return sparkapi.Result{Verdict: v, Status: p.status[hostport]}
}

func (p *stubProber) set(hostport string, v sparkapi.Verdict) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers[hostport] = v
}

func TestFinderVerdictsAndCache(t *testing.T) {
	dir := procDir(t,
		line(0, any4, 4040, listen, 100)+line(1, any4, 4041, listen, 101)+line(2, any4, 4042, listen, 102)+
			line(3, any4, 4043, listen, 103)+line(4, any4, 7078, listen, 104),
		line(0, any6, 4044, listen, 200))
	tab, _ := NewTable(dir)
	p := &stubProber{answers: map[string]sparkapi.Verdict{
		"127.0.0.1:4040": sparkapi.OtherApp,
		"127.0.0.1:4041": sparkapi.NotSpark,
		"127.0.0.1:4042": sparkapi.StartingUp,
		"127.0.0.1:4043": sparkapi.Denied,
		"127.0.0.1:7078": sparkapi.NotSpark,
		"127.0.0.1:4044": sparkapi.StartingUp, // reached over 127.0.0.1 after ::1 is refused
	}}
	f := NewFinder(tab, p, Options{Ports: seq(4040, 4056)})
	now := time.Unix(1000, 0)
	f.now = func() time.Time { return now }
	pass := func() (Socket, bool) {
		t.Helper()
		s, ok, err := f.Pass(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s, ok
	}
	if _, ok := pass(); ok {
		t.Fatal("found a UI among no matches")
	}
	if p.asked["127.0.0.1:7078"] != 0 {
		t.Error("a port outside the range was asked")
	}
	if p.asked["[::1]:4044"] != 1 || p.asked["127.0.0.1:4044"] != 1 {
		t.Errorf("dual-stack socket: asked %v", p.asked)
	}
	now = now.Add(100 * time.Millisecond)
	pass()
	want := map[string]int{"127.0.0.1:4040": 1, "127.0.0.1:4041": 1, "127.0.0.1:4042": 2, "127.0.0.1:4043": 1, "127.0.0.1:4044": 2}
	for hp, n := range want {
		if p.asked[hp] != n {
			t.Errorf("after two passes %s asked %d times, want %d", hp, p.asked[hp], n)
		}
	}
	// Backoff: not-Spark and denied sockets are asked again after a second, then two.
	now = now.Add(time.Second)
	pass()
	if p.asked["127.0.0.1:4041"] != 2 || p.asked["127.0.0.1:4043"] != 2 || p.asked["127.0.0.1:4040"] != 1 {
		t.Errorf("after 1.1s: %v", p.asked)
	}
	now = now.Add(1500 * time.Millisecond)
	pass()
	if p.asked["127.0.0.1:4041"] != 2 {
		t.Errorf("asked again before its backoff of 2s: %v", p.asked)
	}
	// The starting-up UI is ready: found at the next pass.
	p.set("127.0.0.1:4042", sparkapi.Match)
	s, ok := pass()
	if !ok || s.Port != 4042 || s.Inode != 102 {
		t.Fatalf("found %v %t", s, ok)
	}
	if sum, want := f.Summary(), "port 4042: match; port 4044: starting-up; port 4043: denied; port 4040: other-app; port 4041: not-spark"; sum != want {
		t.Errorf("summary\n got %q\nwant %q", sum, want)
	}
	// Another application's socket is never asked again, however long it lives.
	now = now.Add(time.Hour)
	pass()
	if p.asked["127.0.0.1:4040"] != 1 {
		t.Errorf("other application's UI asked %d times", p.asked["127.0.0.1:4040"])
	}
}

// TestFinderSlowSocket: a socket that does not answer cannot hold up finding the UI.
func TestFinderSlowSocket(t *testing.T) {
	dir := procDir(t, line(0, any4, 6000, listen, 20)+line(1, any4, 6001, listen, 21), "")
	tab, _ := NewTable(dir)
	release := make(chan struct{})
	p := &stubProber{
		answers: map[string]sparkapi.Verdict{"127.0.0.1:6000": sparkapi.NotSpark, "127.0.0.1:6001": sparkapi.Match},
		hang:    map[string]chan struct{}{"127.0.0.1:6000": release},
	}
	f := NewFinder(tab, p, Options{Wait: 50 * time.Millisecond})
	start := time.Now()
	s, ok, err := f.Pass(context.Background())
	if err != nil || !ok || s.Port != 6001 {
		t.Fatalf("%v %t %v", s, ok, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("pass took %s", took)
	}
	// Still hanging: not asked a second time meanwhile.
	f.Pass(context.Background())
	close(release)
	time.Sleep(50 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asked["127.0.0.1:6000"] != 1 {
		t.Errorf("hung socket asked %d times", p.asked["127.0.0.1:6000"])
	}
}

func TestFinderLowestMatchAndForget(t *testing.T) {
	dir := procDir(t, line(0, any4, 5001, listen, 11)+line(1, any4, 5000, listen, 10), "")
	tab, _ := NewTable(dir)
	p := &stubProber{answers: map[string]sparkapi.Verdict{"127.0.0.1:5000": sparkapi.Match, "127.0.0.1:5001": sparkapi.Match}}
	f := NewFinder(tab, p, Options{})
	s, ok, err := f.Pass(context.Background())
	if err != nil || !ok || s.Port != 5000 {
		t.Fatalf("%v %t %v", s, ok, err)
	}
	// A match is remembered while the socket listens; forgotten, it is asked afresh.
	f.Pass(context.Background())
	if p.asked["127.0.0.1:5000"] != 1 {
		t.Errorf("a known match asked again: %v", p.asked)
	}
	f.Forget(10)
	s, ok, _ = f.Pass(context.Background())
	if !ok || s.Port != 5000 || p.asked["127.0.0.1:5000"] != 2 {
		t.Errorf("after Forget: %v %t, asked %v", s, ok, p.asked)
	}
}

func TestFinderBoundsWork(t *testing.T) {
	var tcp strings.Builder
	for i := 0; i < 200; i++ {
		tcp.WriteString(line(i, any4, 10000+i, listen, uint64(1000+i)))
	}
	tab, _ := NewTable(procDir(t, tcp.String(), ""))
	p := &stubProber{answers: map[string]sparkapi.Verdict{}}
	for i := 0; i < 200; i++ {
		p.answers[fmt.Sprintf("127.0.0.1:%d", 10000+i)] = sparkapi.OtherApp
	}
	f := NewFinder(tab, p, Options{MaxProbes: 64})
	for pass := 1; pass <= 4; pass++ {
		if _, _, err := f.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := len(p.asked); n != min(64*pass, 200) {
			t.Errorf("after pass %d: %d sockets asked", pass, n)
		}
	}
}

func TestEmptySummary(t *testing.T) {
	tab, _ := NewTable(procDir(t, "", ""))
	if s := NewFinder(tab, &stubProber{}, Options{Ports: seq(4040, 4056)}).Summary(); s != "nothing listens on ports 4040-4056" {
		t.Error(s)
	}
	if s := NewFinder(tab, &stubProber{}, Options{}).Summary(); s != "no listening socket yet" {
		t.Error(s)
	}
}

// synthetic10k is a /proc/net/tcp with n listening sockets (and as many established ones
// for the watch benchmark's busy node).
func synthetic(b *testing.B, listening, established int) string {
	var tcp strings.Builder
	for i := 0; i < listening; i++ {
		tcp.WriteString(line(i, any4, 1024+i%60000, listen, uint64(100000+i)))
	}
	for i := 0; i < established; i++ {
		tcp.WriteString(line(listening+i, pod4, 1024+i%60000, estab, uint64(500000+i)))
	}
	return procDir(b, tcp.String(), "")
}

// BenchmarkPass10k is one discovery pass over 10,000 listening sockets whose verdicts are
// known (the steady state while the UI is not up yet): read and filter the table, probe none.
func BenchmarkPass10k(b *testing.B) {
	tab, _ := NewTable(synthetic(b, 10000, 0))
	p := &stubProber{answers: map[string]sparkapi.Verdict{}}
	f := NewFinder(tab, p, Options{MaxProbes: 1 << 20, Parallel: 64})
	for i := 0; i < 10000; i++ {
		p.answers[fmt.Sprintf("127.0.0.1:%d", 1024+i)] = sparkapi.OtherApp
	}
	if _, _, err := f.Pass(context.Background()); err != nil { // learn the verdicts
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer cpuTime(b)()
	for b.Loop() {
		if _, _, err := f.Pass(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTable10k is procfs reading 10,000 listening sockets alone.
func BenchmarkTable10k(b *testing.B) {
	tab, _ := NewTable(synthetic(b, 10000, 0))
	b.ReportAllocs()
	defer cpuTime(b)()
	for b.Loop() {
		if s, err := tab.Listening(); err != nil || len(s) != 10000 {
			b.Fatal(len(s), err)
		}
	}
}

// BenchmarkWatch is one watch poll while bound, in a Pod's own namespace (a few dozen
// sockets) and on a busy node under hostNetwork.
func BenchmarkWatch(b *testing.B) {
	for _, n := range []struct{ listening, established int }{{20, 50}, {200, 2000}, {10000, 0}} {
		b.Run(fmt.Sprintf("listen=%d,estab=%d", n.listening, n.established), func(b *testing.B) {
			tab, _ := NewTable(synthetic(b, n.listening, n.established))
			s := Socket{Inode: uint64(100000 + n.listening - 1), Port: 1024 + (n.listening-1)%60000}
			b.ReportAllocs()
			for b.Loop() {
				if ok, err := tab.StillListening(s); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

func seq(first, last int) []int {
	var out []int
	for p := first; p <= last; p++ {
		out = append(out, p)
	}
	return out
}

// TestFinderSparkOrder: with a fixed port the candidates are Spark's range in Spark's order
// (wrapping past 65535 to 1024, Utils.userPort), the first one started wins; skipped ports are
// never asked; a 404 from a socket that served the starting-up page is starting up, asked
// again at the next pass, while a 404 from any other socket backs off.
func TestFinderSparkOrder(t *testing.T) {
	dir := procDir(t,
		line(0, any4, 65534, listen, 1)+line(1, any4, 65535, listen, 2)+line(2, any4, 1024, listen, 3)+
			line(3, any4, 1025, listen, 4)+line(4, any4, 1027, listen, 5)+line(5, any4, 4040, listen, 6), "")
	tab, _ := NewTable(dir)
	p := &stubProber{
		answers: map[string]sparkapi.Verdict{
			"127.0.0.1:65534": sparkapi.NotSpark, "127.0.0.1:65535": sparkapi.StartingUp,
			"127.0.0.1:1024": sparkapi.Match, "127.0.0.1:1025": sparkapi.Match, "127.0.0.1:1027": sparkapi.Match,
			"127.0.0.1:4040": sparkapi.Match,
		},
		status: map[string]int{"127.0.0.1:65534": 404},
	}
	var (
		mu       sync.Mutex
		verdicts []string
	)
	f := NewFinder(tab, p, Options{
		Ports: []int{65534, 65535, 1024, 1025, 1026}, // userPort(65534, 0…4)
		Skip:  []int{1025},
		OnVerdict: func(s Socket, r sparkapi.Result) {
			mu.Lock()
			defer mu.Unlock()
			verdicts = append(verdicts, fmt.Sprintf("%d:%s", s.Port, r.Verdict))
		},
	})
	now := time.Unix(1000, 0)
	f.now = func() time.Time { return now }
	pass := func() (Socket, bool) {
		t.Helper()
		s, ok, err := f.Pass(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s, ok
	}
	if s, ok := pass(); !ok || s.Port != 1024 {
		t.Fatalf("found %v %t, want port 1024", s, ok)
	}
	for _, hp := range []string{"127.0.0.1:1025", "127.0.0.1:1027", "127.0.0.1:4040"} {
		if p.asked[hp] != 0 {
			t.Errorf("%s asked (skipped or out of Spark's range)", hp)
		}
	}
	// The UI that was starting up now answers 404 (handlers being attached).
	p.mu.Lock()
	p.answers["127.0.0.1:65535"], p.status["127.0.0.1:65535"] = sparkapi.NotSpark, 404
	p.mu.Unlock()
	now = now.Add(100 * time.Millisecond)
	pass()
	now = now.Add(100 * time.Millisecond)
	pass()
	if p.asked["127.0.0.1:65535"] != 3 || p.asked["127.0.0.1:65534"] != 1 {
		t.Errorf("asked %v: want the starting-up socket at every pass, the plain 404 once (backoff)", p.asked)
	}
	if sum := f.Summary(); !strings.Contains(sum, "port 65535: starting-up") || !strings.Contains(sum, "port 65534: not-spark") {
		t.Errorf("summary %q", sum)
	}
	// Ready: it comes first in Spark's order (the first SparkContext), though its port is higher.
	p.set("127.0.0.1:65535", sparkapi.Match)
	now = now.Add(100 * time.Millisecond)
	if s, ok := pass(); !ok || s.Port != 65535 {
		t.Fatalf("found %v %t, want port 65535", s, ok)
	}
	var got []int
	for _, m := range f.Matches() {
		got = append(got, m.Port)
	}
	if fmt.Sprint(got) != "[65535 1024]" {
		t.Errorf("matches %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(verdicts) // probes run in parallel: changes of different sockets come in any order
	if want := "[1024:match 65534:not-spark 65535:match 65535:starting-up]"; fmt.Sprint(verdicts) != want {
		t.Errorf("verdict changes %v, want %s", verdicts, want)
	}
}

func TestPortsString(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{seq(4040, 4056), "4040-4056"},
		{[]int{65534, 65535, 1024, 1025}, "65534-65535,1024-1025"},
		{[]int{4040}, "4040"},
		{nil, ""},
	} {
		if got := PortsString(tc.in); got != tc.want {
			t.Errorf("PortsString(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
