package redirect

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLimiter: with every slot held by a connection waiting for its request, a new
// connection is served once the longest-waiting one is closed to make room (an idle one at
// once, a new one after minWait); a busy one is never closed. (TestRedirectorUnderAbuse
// counts the built binary's open files under floods.)
func TestLimiter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const slots = 2
	lim := NewLimiter(ln, slots)
	release := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/busy" {
				<-release
			}
			_, _ = io.WriteString(w, "ok")
		}),
		ConnState: lim.ConnState}
	go func() { _ = srv.Serve(lim) }()
	defer srv.Close()
	addr := ln.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	request := func(c net.Conn, path string) (string, error) {
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return "", err
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	// One busy connection and one idle keep-alive connection take both slots.
	busy := dial()
	if _, err := io.WriteString(busy, "GET /busy HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	idle := dial()
	if got, err := request(idle, "/"); err != nil || got != "ok" {
		t.Fatalf("first request: %q %v", got, err)
	}
	// A third is served at once: the idle one made room.
	start := time.Now()
	if got, err := request(dial(), "/"); err != nil || got != "ok" || time.Since(start) > minWait {
		t.Fatalf("with an idle connection holding a slot: %q %v after %s", got, err, time.Since(start))
	}
	if _, err := request(idle, "/"); err == nil {
		t.Error("the idle connection was not the one closed")
	}
	// A connection that never sends its request is closed after minWait, not before.
	slow := dial()
	if _, err := io.WriteString(slow, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "+strings.Repeat("a", 100)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	got, err := request(dial(), "/")
	if took := time.Since(start); err != nil || got != "ok" || took < minWait/2 || took > 3*minWait {
		t.Errorf("with a slow connection holding a slot: %q %v after %s, want about %s", got, err, took, minWait)
	}
	close(release)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("the busy connection was closed: %v", err)
	}
}
