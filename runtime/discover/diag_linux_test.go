package discover

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDiagAgreesWithProc: the same listening sockets, inodes and addresses through sock_diag
// and /proc/net/tcp*, for sockets this test opens and everything else listening here.
func TestDiagAgreesWithProc(t *testing.T) {
	var ls []net.Listener
	for _, a := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp4", "0.0.0.0:0"}, {"tcp6", "[::1]:0"}, {"tcp6", "[::]:0"}} {
		l, err := net.Listen(a.network, a.addr)
		if err != nil {
			if a.network == "tcp6" {
				continue // no IPv6 here
			}
			t.Fatal(err)
		}
		defer l.Close()
		ls = append(ls, l)
	}
	d, err := OpenDiag()
	if err != nil {
		t.Fatalf("sock_diag: %v", err)
	}
	defer d.Close()
	tab, err := NewTable("")
	if err != nil {
		t.Fatal(err)
	}
	key := func(s Socket) string { return fmt.Sprintf("%s v6=%t", s, s.V6) }
	list := func(src Source) []string {
		socks, err := src.Listening()
		if err != nil {
			t.Fatalf("%s: %v", src.Name(), err)
		}
		var out []string
		for _, s := range socks {
			out = append(out, key(s))
		}
		sort.Strings(out)
		return out
	}
	// Other processes open and close sockets meanwhile: compare ours exactly, the rest
	// loosely.
	fromDiag, fromProc := list(d), list(tab)
	inDiag := map[string]bool{}
	for _, k := range fromDiag {
		inDiag[k] = true
	}
	missing := 0
	for _, k := range fromProc {
		if !inDiag[k] {
			missing++
		}
	}
	if missing > len(fromProc)/4 {
		t.Errorf("sock_diag and procfs disagree:\n%v\n%v", fromDiag, fromProc)
	}
	socks, _ := d.Listening()
	for _, l := range ls {
		port := l.Addr().(*net.TCPAddr).Port
		var found *Socket
		for i, s := range socks {
			if s.Port == port {
				found = &socks[i]
			}
		}
		if found == nil || found.Inode == 0 {
			t.Fatalf("%s not listed by sock_diag: %v", l.Addr(), fromDiag)
		}
		if !inDiag[key(*found)] {
			t.Fatalf("%s", key(*found))
		}
		ok, err := d.StillListening(*found)
		if !ok || err != nil {
			t.Errorf("StillListening(%s) = %t, %v", found, ok, err)
		}
		okProc, err := tab.StillListening(*found)
		if !okProc || err != nil {
			t.Errorf("procfs StillListening(%s) = %t, %v", found, okProc, err)
		}
		_ = l.Close()
		// Seen once in ~50 runs under -race: the kernel still listed the socket right after
		// close(2) returned; it is gone at the next look (the runtime's next poll).
		for i := 0; i < 50; i++ {
			if ok, err = d.StillListening(*found); !ok || err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if ok || err != nil {
			t.Errorf("after close: StillListening(%s) = %t, %v", found, ok, err)
		}
		// A new socket on the same port is not the old one (the kernel's cookie differs).
		if l2, err := net.Listen(l.Addr().Network(), l.Addr().String()); err == nil {
			if ok, err := d.StillListening(*found); ok || err != nil {
				t.Errorf("new socket on the port taken for the old one: %t, %v", ok, err)
			}
			_ = l2.Close()
		}
	}
}

func TestOpen(t *testing.T) {
	for mode, want := range map[string]string{"auto": "sock_diag", "netlink": "sock_diag", "proc": "procfs"} {
		src, err := Open(mode, "")
		if err != nil || src.Name() != want {
			t.Errorf("Open(%q) = %v, %v", mode, src, err)
		}
	}
	if _, err := Open("carrier-pigeon", ""); err == nil {
		t.Error("no error for an unknown source")
	}
}

// inNewNetns runs f on a thread in a network namespace of its own (root only), so that
// thousands of listening sockets do not show up in the host's tables. ok is false when
// namespaces cannot be created here.
func inNewNetns(f func()) (ok bool) {
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- false
			return
		}
		defer orig.Close()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- false
			return
		}
		f()
		// Back to the original namespace before the thread serves other goroutines (or,
		// left locked, ends with this one; the main thread cannot end and would leave
		// /proc/self/net pointing at the benchmark's namespace).
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- true
	}()
	return <-done
}

// BenchmarkDiag10k is one discovery read of 10,000 listening sockets through sock_diag, and
// one watch poll among them (sockets opened in a network namespace of the benchmark's own
// when it may create one, else in the host's).
func BenchmarkDiag10k(b *testing.B) {
	run := func() {
		var fds []int
		defer func() {
			for _, fd := range fds {
				_ = syscall.Close(fd)
			}
		}()
		for i := 0; i < 10000; i++ {
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			fds = append(fds, fd)
			if err := syscall.Bind(fd, &syscall.SockaddrInet4{}); err != nil { // any port
				b.Fatal(err)
			}
			if err := syscall.Listen(fd, 1); err != nil {
				b.Fatal(err)
			}
		}
		d, err := OpenDiag()
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		socks, err := d.Listening()
		if err != nil || len(socks) < 10000 {
			b.Fatalf("%d sockets, %v", len(socks), err)
		}
		last := socks[len(socks)-1]
		b.Run("listening", func(b *testing.B) {
			b.ReportAllocs()
			defer cpuTime(b)()
			for b.Loop() {
				if _, err := d.Listening(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("still-listening", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ok, err := d.StillListening(last); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
	if !inNewNetns(run) {
		b.Log("no network namespace of its own (not root?): sockets opened in the host's")
		run()
	}
}

// BenchmarkWatchReal is one watch poll against this machine's real tables, both ways.
func BenchmarkWatchReal(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	d, err := OpenDiag()
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	tab, _ := NewTable("")
	socks, _ := d.Listening()
	var s Socket
	for _, x := range socks {
		if x.Port == l.Addr().(*net.TCPAddr).Port {
			s = x
		}
	}
	for _, src := range []Source{d, tab} {
		b.Run(src.Name(), func(b *testing.B) {
			for b.Loop() {
				if ok, err := src.StillListening(s); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// cpuTime reports the process's CPU time (user+system, GC included) per operation: on a
// shared, loaded machine wall time says more about the neighbours than about the code.
func cpuTime(b *testing.B) func() {
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	return func() {
		var after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		ns := func(r syscall.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }
		if b.N > 0 {
			b.ReportMetric(float64(ns(after)-ns(before))/float64(b.N), "cpu-ns/op")
		}
	}
}
