package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/verb"
)

// abuseAPI is the API server the redirector lists and watches in TestRedirectorUnderAbuse:
// one handed-off Service, and a watch that stays open. (The abuse is of the redirect port;
// the real API server's part is TestRedirectorBinary's and the hostile black-box test's.)
func abuseAPI(t *testing.T, ns string) string {
	t.Helper()
	list := `{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"victim-ui-svc","namespace":"` + ns +
		`","resourceVersion":"6","annotations":{"sparkui.dev/history-uri":"https://old.example/history/spark-victim/","sparkui.dev/route-prefix":"/"}},"spec":{"selector":{"sparkui.dev/history-redirector":"true"}}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, list)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "+srv.URL+"}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// memStatus is VmRSS and VmHWM (the peak RSS) of a process.
func memStatus(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(l, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

func openFDs(t *testing.T, pid int) int {
	t.Helper()
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestRedirectorUnderAbuse: the built binary with the example Deployment's args and env
// (its connection limit, GOMEMLIMIT) on loopback, against floods of more hostile connections
// than its limit: unfinished 1,000 KiB headers, partial headers held open (slowloris), slowly
// sent POST bodies, idle keep-alive connections. Through each, its peak RSS stays under the
// example's memory limit, its open files under the limit's count, and an ordinary request is
// answered with the redirect within seconds.
func TestRedirectorUnderAbuse(t *testing.T) {
	_, _, _, dep := exampleRedirector(t)
	ctr := dep.Spec.Template.Spec.Containers[0]
	memLimit := ctr.Resources.Limits.Memory().Value()
	var env []string
	historyURL, maxConns := "", 0
	for _, e := range ctr.Env {
		if e.ValueFrom != nil {
			continue
		}
		env = append(env, e.Name+"="+e.Value)
		switch e.Name {
		case "SPARKUI_HISTORY_URL":
			historyURL = e.Value
		case "SPARKUI_MAX_CONNECTIONS":
			maxConns, _ = strconv.Atoi(e.Value)
		}
	}
	if memLimit == 0 || historyURL == "" || maxConns == 0 {
		t.Fatalf("the example's container lacks a memory limit (%d), SPARKUI_HISTORY_URL (%q) or SPARKUI_MAX_CONNECTIONS (%d)", memLimit, historyURL, maxConns)
	}
	ns := "analytics"
	port, health := freePort(t), freePort(t)
	args := append([]string(nil), ctr.Args...)
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--redirector-port="):
			args[i] = fmt.Sprintf("--redirector-port=%d", port)
		case strings.HasPrefix(a, "--health-port="):
			args[i] = fmt.Sprintf("--health-port=%d", health)
		}
	}
	env = append(env, "KUBECONFIG="+abuseAPI(t, ns), "POD_NAMESPACE="+ns)
	p := startProc(t, env, args...)
	pid := p.cmd.Process.Pid
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	want := strings.TrimRight(historyURL, "/") + "/history/spark-victim/"

	ordinary := func(what string, within time.Duration) time.Duration {
		t.Helper()
		c := &http.Client{Timeout: within, Transport: &http.Transport{DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/jobs/", nil)
		req.Header.Set("X-Sparkui-Service", "victim-ui-svc")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: an ordinary request was not answered within %s: %v\n%s", what, within, err, p.out.String())
		}
		resp.Body.Close()
		if resp.StatusCode != 302 || resp.Header.Get("Location") != want {
			t.Fatalf("%s: %d %q, want 302 %q", what, resp.StatusCode, resp.Header.Get("Location"), want)
		}
		return time.Since(start)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _, _, err := get(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), "x", nil)
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %d %v\n%s", code, err, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	ordinary("idle", 5*time.Second)
	_, base := memStatus(t, pid)

	// Each flood: n connections, each doing its thing until the flood's context ends; the
	// peak RSS is sampled meanwhile and an ordinary request must be answered.
	var peakFDs atomic.Int64
	flood := func(name string, n int, hostile func(ctx context.Context, c net.Conn)) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var opened atomic.Int64
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := net.Dialer{Timeout: 5 * time.Second}
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					return
				}
				opened.Add(1)
				defer c.Close()
				go func() { <-ctx.Done(); c.Close() }()
				hostile(ctx, c)
			}()
		}
		time.Sleep(2 * time.Second) // the flood is under way
		took := ordinary(name, 10*time.Second)
		if f := openFDs(t, pid); int64(f) > peakFDs.Load() {
			peakFDs.Store(int64(f))
		}
		time.Sleep(time.Second)
		rss, hwm := memStatus(t, pid)
		fds := openFDs(t, pid)
		cancel()
		wg.Wait()
		t.Logf("%-28s %5d connections (%d opened): ordinary request answered in %s; RSS %.1f MiB, peak %.1f MiB, %d fds",
			name, n, opened.Load(), took.Round(time.Millisecond), float64(rss)/(1<<20), float64(hwm)/(1<<20), fds)
		if hwm >= memLimit {
			t.Errorf("%s: peak RSS %d bytes reached the example's limit %d", name, hwm, memLimit)
		}
		if fds > maxConns+16+64 {
			t.Errorf("%s: %d open files with --max-connections=%d", name, fds, maxConns)
		}
	}
	n := 3 * maxConns

	// Headers of 1,000 KiB, sent as fast as the redirector reads: answered 431 after 32 KiB.
	junk := strings.Repeat("a", 8<<10)
	flood("1,000 KiB headers", n, func(ctx context.Context, c net.Conn) {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Junk: "); err != nil {
			return
		}
		for sent := 0; sent < 1000<<10 && ctx.Err() == nil; sent += len(junk) {
			if _, err := io.WriteString(c, junk); err != nil {
				return
			}
		}
	})
	// Slowloris: 30 KiB of a header, then nothing.
	flood("held partial headers", n, func(ctx context.Context, c net.Conn) {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Junk: "+strings.Repeat("a", 30<<10)); err != nil {
			return
		}
		<-ctx.Done()
	})
	// Slow bodies: a POST whose 1 MB body comes a byte a second, and one chunked.
	var answeredSlow atomic.Int64
	flood("slow POST bodies", n, func(ctx context.Context, c net.Conn) {
		hdr := "POST / HTTP/1.1\r\nHost: x\r\nX-Sparkui-Service: victim-ui-svc\r\nContent-Length: 1000000\r\n\r\n"
		if time.Now().UnixNano()%2 == 0 {
			hdr = "POST / HTTP/1.1\r\nHost: x\r\nX-Sparkui-Service: victim-ui-svc\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n"
		}
		if _, err := io.WriteString(c, hdr); err != nil {
			return
		}
		go func() {
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 302 {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			// Answered without reading the body, and the connection closed at once: not
			// held while the body trickles in.
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			if _, err := br.ReadByte(); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				answeredSlow.Add(1)
			}
		}()
		for ctx.Err() == nil {
			if _, err := c.Write([]byte("a")); err != nil {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	})
	// Most get a slot while the flood lasts (the rest wait in the backlog until it ends).
	if a := answeredSlow.Load(); a < int64(maxConns) {
		t.Errorf("%d slow POSTs were answered with their redirect and closed within 3 s, want at least %d", a, maxConns)
	}
	// Idle keep-alive connections after one request each.
	flood("idle keep-alive connections", n, func(ctx context.Context, c net.Conn) {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Sparkui-Service: victim-ui-svc\r\n\r\n"); err != nil {
			return
		}
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			resp.Body.Close()
		}
		<-ctx.Done()
	})
	_, hwm := memStatus(t, pid)
	t.Logf("redirector with --max-connections=%d: RSS idle %.1f MiB, peak over all floods %.1f MiB (limit %.0f MiB), peak fds %d",
		maxConns, float64(base)/(1<<20), float64(hwm)/(1<<20), float64(memLimit)/(1<<20), peakFDs.Load())
	ordinary("after the floods", 5*time.Second)
	if code := p.sigterm(t, 10*time.Second); code != verb.ExitOK {
		t.Errorf("exit %d\n%s", code, p.out.String())
	}
}
