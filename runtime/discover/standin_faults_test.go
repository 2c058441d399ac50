package discover

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// timedOut: what a probe's detail says when the UI did not answer within the probe timeout.
func timedOut(detail string) bool {
	return strings.Contains(detail, "Timeout") || strings.Contains(detail, "deadline exceeded") || strings.Contains(detail, "timeout")
}

// TestStandInGCPause: a stop-the-world pause longer than the probe timeout. Before the UI is
// proven, the runtime backs off (Unknown: 100 ms doubling to 5 s), says so in its "still
// waiting" summary, and binds once the pause ends; a UI already bound stays bound through a
// pause (a listening socket serves one application for its whole life: no re-probe).
func TestStandInGCPause(t *testing.T) {
	ui := startUI(t, fakespark.Options{}, "127.0.0.1", 0, nil)
	ui.Pause(1500 * time.Millisecond)
	f, _ := standinFinder(t, sparkapi.NewProber(standinID, false, 200*time.Millisecond), ui.HTTPPort)
	if s, ok := passFor(t, f, 800*time.Millisecond); ok {
		t.Fatalf("bound %v during the pause", s)
	}
	if sum := f.Summary(); !strings.Contains(sum, "port "+strconv.Itoa(ui.HTTPPort)+": unknown") || !timedOut(sum) {
		t.Fatalf("summary during the pause: %s", sum)
	}
	during := ui.RequestsFrom("sparkui-runtime")
	if during > 6 {
		t.Errorf("%d probes in 800 ms of pause: no backoff", during)
	}
	if s, ok := passFor(t, f, 4*time.Second); !ok || s.Port != ui.HTTPPort {
		t.Fatalf("not bound after the pause: %s", f.Summary())
	}
	ui.Pause(2 * time.Second)
	if s, ok := passFor(t, f, 100*time.Millisecond); !ok || s.Port != ui.HTTPPort {
		t.Fatalf("a pause unbound the UI: %s", f.Summary())
	}
}

// TestStandInPoolExhausted: a UI whose thread pool is exhausted accepts connections and never
// answers. Never bound, asked with backoff, named in the summary; bound once threads free up.
func TestStandInPoolExhausted(t *testing.T) {
	ui := startUI(t, fakespark.Options{Hang: true}, "127.0.0.1", 0, nil)
	f, _ := standinFinder(t, sparkapi.NewProber(standinID, false, 200*time.Millisecond), ui.HTTPPort)
	if s, ok := passFor(t, f, 2*time.Second); ok {
		t.Fatalf("bound %v with no answer", s)
	}
	if sum := f.Summary(); !strings.Contains(sum, ": unknown") || !timedOut(sum) {
		t.Fatalf("summary: %s", sum)
	}
	// Without backoff: 2 s / (200 ms timeout + 50 ms between passes) = 8 probes.
	if n := ui.RequestsFrom("sparkui-runtime"); n < 2 || n > 6 {
		t.Errorf("%d probes in 2 s of a hung UI, want backoff (2–6)", n)
	}
	ui.SetHang(false)
	if _, ok := passFor(t, f, 6*time.Second); !ok {
		t.Fatalf("not bound once the pool freed up: %s", f.Summary())
	}
}

// TestStandInSlowStart: a driver whose UI shows "starting up" far longer than any probe
// timeout (a slow SparkContext: tens of seconds, shortened here) is asked at every pass and
// bound at once when the REST API answers.
func TestStandInSlowStart(t *testing.T) {
	ui := startUI(t, fakespark.Options{}, "127.0.0.1", 0, nil)
	ui.Set(fakespark.StartingUp)
	f, v := standinFinder(t, sparkapi.NewProber(standinID, false, 200*time.Millisecond), ui.HTTPPort)
	if s, ok := passFor(t, f, time.Second); ok {
		t.Fatalf("bound %v while starting up", s)
	}
	if r := v.last(ui.HTTPPort); r.Verdict != sparkapi.StartingUp {
		t.Fatalf("verdict %s (%s)", r.Verdict, r.Detail)
	}
	ui.Set(fakespark.Ready)
	start := time.Now()
	if _, ok := passFor(t, f, time.Second); !ok {
		t.Fatalf("not bound once ready: %s", f.Summary())
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("bound %v after ready: starting up must be asked at every pass", d)
	}
}

// TestStandInStop: SparkContext.stop posts ApplicationEnd and then stops the UI at once,
// before the DAG scheduler and the listener bus (core/src/main/scala/org/apache/spark/
// SparkContext.scala stop, 3.5 and 4.0); the live UI never lists its attempt completed
// (SparkUI.getApplicationInfoList: completed = false, endTime -1), so what the runtime sees is
// the listening socket going away: the bound socket is no longer a match, and nothing else is.
func TestStandInStop(t *testing.T) {
	ui := startUI(t, fakespark.Options{}, "127.0.0.1", 0, nil)
	f, _ := standinFinder(t, sparkapi.NewProber(standinID, false, 200*time.Millisecond), ui.HTTPPort)
	s, ok := passFor(t, f, time.Second)
	if !ok {
		t.Fatalf("not bound: %s", f.Summary())
	}
	ui.Close()
	if still, err := f.Source().StillListening(s); still || err != nil {
		t.Fatalf("after the UI stopped: still listening %t, %v", still, err)
	}
	if s, ok := passFor(t, f, 200*time.Millisecond); ok {
		t.Fatalf("still bound to %v after the UI stopped", s)
	}
	if sum := f.Summary(); !strings.Contains(sum, "nothing listens on ports "+strconv.Itoa(ui.HTTPPort)) {
		t.Errorf("summary: %s", sum)
	}
}
