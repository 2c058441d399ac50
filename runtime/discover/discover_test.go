package discover

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
