package control

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func sockPath(t *testing.T) string {
	t.Helper()
	// Unix socket paths are limited to 108 bytes: t.TempDir() can be long.
	dir, err := os.MkdirTemp("", "sui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "runtime.sock")
}

func TestWithdrawOK(t *testing.T) {
	p := sockPath(t)
	if err := os.WriteFile(p, []byte("stale"), 0o600); err != nil { // left by a previous run
		t.Fatal(err)
	}
	var calls atomic.Int32
	var gotDeadline time.Duration
	s, err := Listen(p, func(ctx context.Context) error {
		calls.Add(1)
		dl, _ := ctx.Deadline()
		gotDeadline = time.Until(dl)
		time.Sleep(50 * time.Millisecond) // the API server's round trip
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := os.Stat(p)
	if err != nil || st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != 0o666 {
		t.Fatalf("socket mode %v, %v", st.Mode(), err)
	}
	start := time.Now()
	if err := Withdraw(p, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("answered after %s, before the withdrawal finished", took)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls", calls.Load())
	}
	if gotDeadline <= 0 || gotDeadline > 2*time.Second {
		t.Errorf("server-side bound %s, want within the client's 2s", gotDeadline)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("socket left after Close: %v", err)
	}
}

func TestWithdrawError(t *testing.T) {
	p := sockPath(t)
	s, err := Listen(p, func(context.Context) error { return errors.New("403 Forbidden:\nno") })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = Withdraw(p, time.Second)
	if err == nil || err.Error() != "403 Forbidden: no" {
		t.Fatalf("got %v", err)
	}
}

func TestWithdrawUnreachable(t *testing.T) {
	start := time.Now()
	err := Withdraw(filepath.Join(t.TempDir(), "none.sock"), 10*time.Second)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %s to find nobody listening", took)
	}
}

func TestWithdrawTimeout(t *testing.T) {
	p := sockPath(t)
	released := make(chan struct{})
	s, err := Listen(p, func(ctx context.Context) error {
		<-ctx.Done() // the API server never answers
		close(released)
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	err = Withdraw(p, 300*time.Millisecond)
	took := time.Since(start)
	if err == nil || took > 2*time.Second || took < 250*time.Millisecond {
		t.Fatalf("after %s: %v", took, err)
	}
	select {
	case <-released:
	case <-time.After(2 * time.Second):
		t.Fatal("the server kept waiting after the client's bound")
	}
}

func TestHangUpEndsWait(t *testing.T) {
	p := sockPath(t)
	released := make(chan struct{})
	s, err := Listen(p, func(ctx context.Context) error {
		<-ctx.Done()
		close(released)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("withdraw 1h\n"))
	time.Sleep(50 * time.Millisecond)
	_ = c.Close()
	select {
	case <-released:
	case <-time.After(2 * time.Second):
		t.Fatal("the wait did not end when the client hung up")
	}
}

func TestUnknownRequest(t *testing.T) {
	p := sockPath(t)
	s, err := Listen(p, func(context.Context) error { t.Error("called"); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("bind 4040\n"))
	b := make([]byte, 100)
	n, _ := c.Read(b)
	if !strings.HasPrefix(string(b[:n]), "error unknown request") {
		t.Errorf("answer %q", b[:n])
	}
}

func TestCloseEndsOpenRequests(t *testing.T) {
	p := sockPath(t)
	s, err := Listen(p, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Withdraw(p, 10*time.Second) }()
	time.Sleep(100 * time.Millisecond)
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("no error when the runtime went away")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("client still waiting after the server closed")
	}
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not return")
	}
}
