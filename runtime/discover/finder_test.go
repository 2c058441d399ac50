package discover

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// The Finder's passes over a stub prober: verdicts, backoff, Spark's port order, bounds.

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
