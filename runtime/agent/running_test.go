package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/agent"
)

// Running the agent in-process for the cluster tests: start, stop, wait for a status, logs.

// running is an agent running in-process.
type running struct {
	*agent.Agent
	cfg    agent.Config
	logs   *logBuf
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, a *app, cfg agent.Config) *running {
	t.Helper()
	logs := &logBuf{t: t}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	checked, err := cfg.Check()
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.New(checked, a.user, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Agent: ag, cfg: cfg, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- ag.Run(ctx, 10*time.Second) }()
	t.Cleanup(func() {
		r.stop(t)
		logs.close()
	})
	return r
}

// stop is SIGTERM: it returns Run's result.
func (r *running) stop(t testing.TB) error {
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the runtime did not stop within 20s of SIGTERM")
		return nil
	}
}

func (r *running) waitStatus(t testing.TB, timeout time.Duration, what string, cond func(agent.Status) bool) agent.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	st, err := r.WaitFor(ctx, cond)
	if err != nil {
		t.Fatalf("waiting %s for %s: %v (last status %+v)\nlogs:\n%s", timeout, what, err, st, r.logs.String())
	}
	return st
}

func (r *running) waitBound(t testing.TB, port int) agent.Status {
	t.Helper()
	return r.waitStatus(t, 20*time.Second, fmt.Sprintf("bound to port %d", port), func(s agent.Status) bool { return s.Bound && s.Port == port })
}

func (r *running) waitWithdrawn(t testing.TB) agent.Status {
	t.Helper()
	return r.waitStatus(t, 20*time.Second, "withdrawn", func(s agent.Status) bool { return !s.Bound && !s.At.IsZero() })
}

func (r *running) waitErr(t testing.TB, substrs ...string) string {
	t.Helper()
	st := r.waitStatus(t, 30*time.Second, fmt.Sprintf("an error containing %q", substrs), func(s agent.Status) bool {
		for _, sub := range substrs {
			if !strings.Contains(s.Err, sub) {
				return false
			}
		}
		return true
	})
	return st.Err
}

// logBuf collects the runtime's log lines and passes them to the test log.
type logBuf struct {
	t      testing.TB
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.closed {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (l *logBuf) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
