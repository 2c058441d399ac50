package discover

import (
	"context"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// A REST API that keeps answering 5xx was taken for a starting UI and asked at every pass
// (100 ms) forever, never reported (issue 31, fix 4): now it backs off to at most 5 s and is
// reported once, after failingReport answers in a row.
func TestFinderFailingAPI(t *testing.T) {
	dir := procDir(t, line(0, any4, 4040, listen, 100), "")
	tab, _ := NewTable(dir)
	p := &stubProber{answers: map[string]sparkapi.Verdict{"127.0.0.1:4040": sparkapi.Failing}}
	var reported []sparkapi.Verdict
	f := NewFinder(tab, p, Options{Ports: seq(4040, 4056), OnVerdict: func(_ Socket, r sparkapi.Result) {
		reported = append(reported, r.Verdict)
	}})
	now := time.Unix(1000, 0)
	f.now = func() time.Time { return now }
	// Ten minutes of 100 ms passes.
	for range 6000 {
		if _, ok, err := f.Pass(context.Background()); ok || err != nil {
			t.Fatalf("found %t, err %v", ok, err)
		}
		now = now.Add(100 * time.Millisecond)
	}
	// 100ms, 200ms, …, 3.2s, then every 5 s: about 120 questions in ten minutes, not 6000.
	if n := p.asked["127.0.0.1:4040"]; n < 100 || n > 130 {
		t.Errorf("a failing REST API asked %d times in ten minutes", n)
	}
	if len(reported) != 1 || reported[0] != sparkapi.Failing {
		t.Errorf("reported %v, want one failing", reported)
	}
	// It recovers: found within the 5 s cap.
	p.set("127.0.0.1:4040", sparkapi.Match)
	found := false
	for range 60 {
		if _, ok, _ := f.Pass(context.Background()); ok {
			found = true
			break
		}
		now = now.Add(100 * time.Millisecond)
	}
	if !found {
		t.Error("not found within 6 s of the REST API recovering")
	}
}
