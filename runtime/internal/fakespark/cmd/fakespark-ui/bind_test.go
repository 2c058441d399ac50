package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// takenRun listens on every address at n consecutive free ports and returns the first.
func takenRun(t *testing.T, n int) int {
	t.Helper()
next:
	for attempt := 0; attempt < 50; attempt++ {
		l, err := net.Listen("tcp", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		base := l.Addr().(*net.TCPAddr).Port
		ls := []net.Listener{l}
		for i := 1; i < n; i++ {
			li, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", base+i))
			if err != nil {
				for _, x := range ls {
					x.Close()
				}
				continue next
			}
			ls = append(ls, li)
		}
		t.Cleanup(func() {
			for _, x := range ls {
				x.Close()
			}
		})
		return base
	}
	t.Fatal("no run of free ports")
	return 0
}

// TestBindUIMovesLikeSpark: a taken fixed port moves to port+1, port+2 … (Spark's
// startServiceOnPort), and after maxRetries collisions the start fails naming the retries.
func TestBindUIMovesLikeSpark(t *testing.T) {
	base := takenRun(t, 2)
	srv, err := bindUI(fakespark.Options{AppID: "app"}, base, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Port != base+2 {
		t.Errorf("bound %d, want %d (base %d and base+1 taken)", srv.Port, base+2, base)
	}

	base = takenRun(t, 3)
	_, err = bindUI(fakespark.Options{AppID: "app"}, base, 2)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "failed after 2 retries") {
		t.Errorf("three ports taken, maxRetries 2: %v, want EADDRINUSE and failed after 2 retries", err)
	}

	srv, err = bindUI(fakespark.Options{AppID: "app"}, 0, 16)
	if err != nil || srv.Port == 0 {
		t.Fatalf("a random port: %v", err)
	}
	srv.Close()
}
