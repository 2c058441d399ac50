package discover

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// The runtime's discovery (the real socket table and the real prober) against the stand-in
// UI bound as Spark binds it (fakespark.StartUI: JettyUtils.startJettyServer's connectors).

var standinID = sparkapi.Identity{AppID: "spark-standin", PodName: "si-driver", Namespace: "ns"}

type verdicts struct {
	mu sync.Mutex
	by map[int][]sparkapi.Result
}

func (v *verdicts) on(s Socket, r sparkapi.Result) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.by == nil {
		v.by = map[int][]sparkapi.Result{}
	}
	v.by[s.Port] = append(v.by[s.Port], r)
}

func (v *verdicts) last(port int) sparkapi.Result {
	v.mu.Lock()
	defer v.mu.Unlock()
	rs := v.by[port]
	if len(rs) == 0 {
		return sparkapi.Result{}
	}
	return rs[len(rs)-1]
}

func standinFinder(t *testing.T, p *sparkapi.Prober, ports ...int) (*Finder, *verdicts) {
	t.Helper()
	tab, err := NewTable("")
	if err != nil {
		t.Fatal(err)
	}
	v := &verdicts{}
	return NewFinder(tab, p, Options{Ports: ports, OnVerdict: v.on, Wait: time.Second}), v
}

// passFor runs passes until one matches or d passes; the match, or false.
func passFor(t *testing.T, f *Finder, d time.Duration) (Socket, bool) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		s, ok, err := f.Pass(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return s, true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return Socket{}, false
}

func startUI(t *testing.T, o fakespark.Options, host string, port int, ssl *fakespark.SSL) *fakespark.UI {
	t.Helper()
	o.AppID, o.State = standinID.AppID, fakespark.Ready
	ui, err := fakespark.StartUI(o, host, port, fakespark.DefaultMaxRetries, ssl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ui.Close)
	return ui
}

// TestStandInTLS: with spark.ssl.ui.enabled the runtime configured for TLS binds the HTTPS
// connector (spark.ssl.ui.port, else userPort(spark.ui.port, 400)), never the plain one, which
// it reports as the redirect connector; configured for plain HTTP it binds nothing and says
// why; with needClientAuth it cannot verify the UI and says so.
func TestStandInTLS(t *testing.T) {
	cert, err := fakespark.NewCert("spark-driver", "127.0.0.1", "::1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	ui := startUI(t, fakespark.Options{}, "0.0.0.0", 0, &fakespark.SSL{Cert: cert})
	if ui.SecurePort == 0 || ui.SecurePort == ui.HTTPPort {
		t.Fatalf("secure port %d, http port %d", ui.SecurePort, ui.HTTPPort)
	}
	f, v := standinFinder(t, sparkapi.NewProber(standinID, true, time.Second), ui.HTTPPort, ui.SecurePort)
	if s, ok := passFor(t, f, 5*time.Second); !ok || s.Port != ui.SecurePort {
		t.Fatalf("TLS runtime: bound %v %t, want the HTTPS port %d (verdicts %v)", s, ok, ui.SecurePort, v.by)
	}
	if r := v.last(ui.HTTPPort); r.Verdict != sparkapi.NotSpark && r.Verdict != sparkapi.TLSMismatch {
		t.Errorf("TLS runtime on the redirect connector: %s (%s)", r.Verdict, r.Detail)
	}

	f, v = standinFinder(t, sparkapi.NewProber(standinID, false, time.Second), ui.HTTPPort, ui.SecurePort)
	if s, ok := passFor(t, f, time.Second); ok {
		t.Fatalf("plain runtime bound %v", s)
	}
	if r := v.last(ui.HTTPPort); r.Verdict != sparkapi.TLSMismatch || !strings.Contains(r.Detail, "redirects to https://") {
		t.Errorf("plain runtime on the redirect connector: %s (%s)", r.Verdict, r.Detail)
	}
	// Plain HTTP on the HTTPS connector: how Jetty's SslConnection ends it (a TLS alert, or
	// the connection closed) was not read; Go's server answers 400. Never bound either way.
	if r := v.last(ui.SecurePort); r.Verdict != sparkapi.TLSMismatch && r.Verdict != sparkapi.NotSpark {
		t.Errorf("plain runtime on the HTTPS connector: %s (%s)", r.Verdict, r.Detail)
	}

	client, err := fakespark.NewCert("some-client")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(client.Leaf)
	mtls := startUI(t, fakespark.Options{}, "127.0.0.1", 0, &fakespark.SSL{Cert: cert, NeedClientAuth: true, ClientCAs: pool})
	f, v = standinFinder(t, sparkapi.NewProber(standinID, true, time.Second), mtls.SecurePort)
	if s, ok := passFor(t, f, time.Second); ok {
		t.Fatalf("bound %v behind needClientAuth", s)
	}
	if r := v.last(mtls.SecurePort); r.Verdict != sparkapi.TLSMismatch || !strings.Contains(r.Detail, "needClientAuth") {
		t.Errorf("needClientAuth: %s (%s)", r.Verdict, r.Detail)
	}
	// The stand-in really demands the certificate: a client presenting it is served.
	c, err := tls.Dial("tcp", mtls.Server.Addr, &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{client}}) //nolint:gosec // test
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Handshake(); err != nil {
		t.Fatalf("handshake with the client certificate: %v", err)
	}
	_ = c.Close()
}

// TestStandInTLSPorts: the HTTPS port follows JettyUtils.startJettyServer: spark.ssl.ui.port
// when set, else userPort(spark.ui.port, 400); both connectors retry a busy port.
func TestStandInTLSPorts(t *testing.T) {
	cert, err := fakespark.NewCert("spark-driver", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	// Below the kernel's ephemeral range (32768–60999 by default): an outgoing connection of a
	// test running in parallel never takes these, as it once took 47112.
	const port = 27111
	ui := startUI(t, fakespark.Options{}, "127.0.0.1", port, &fakespark.SSL{Cert: cert})
	if ui.HTTPPort != port || ui.SecurePort != port+400 {
		t.Fatalf("ports %d/%d, want %d/%d", ui.HTTPPort, ui.SecurePort, port, port+400)
	}
	// Both taken now: a second driver's UI moves each connector to the next port.
	ui2 := startUI(t, fakespark.Options{}, "127.0.0.1", port, &fakespark.SSL{Cert: cert})
	if ui2.HTTPPort != port+1 || ui2.SecurePort != port+401 {
		t.Fatalf("second UI ports %d/%d, want %d/%d", ui2.HTTPPort, ui2.SecurePort, port+1, port+401)
	}
	ui3 := startUI(t, fakespark.Options{}, "127.0.0.1", port, &fakespark.SSL{Cert: cert, Port: 26999})
	if ui3.SecurePort != 26999 {
		t.Fatalf("spark.ssl.ui.port 26999: secure port %d", ui3.SecurePort)
	}
	f, _ := standinFinder(t, sparkapi.NewProber(standinID, true, time.Second), 26999)
	if s, ok := passFor(t, f, 3*time.Second); !ok || s.Port != 26999 {
		t.Fatalf("bound %v %t, want spark.ssl.ui.port 26999", s, ok)
	}
}

// TestStandInDualStack: a UI on every interface holds one "::" socket (tcp6, dual-stack), as
// a JVM does; the runtime finds it there and reaches it.
func TestStandInDualStack(t *testing.T) {
	ui := startUI(t, fakespark.Options{}, "0.0.0.0", 0, nil)
	tab, err := NewTable("")
	if err != nil {
		t.Fatal(err)
	}
	socks, err := tab.Listening()
	if err != nil {
		t.Fatal(err)
	}
	var got []Socket
	for _, s := range socks {
		if s.Port == ui.HTTPPort {
			got = append(got, s)
		}
	}
	if len(got) != 1 || !got[0].V6 || !got[0].IP.IsUnspecified() {
		t.Fatalf("sockets on port %d: %v, want one dual-stack :: socket", ui.HTTPPort, got)
	}
	f, _ := standinFinder(t, sparkapi.NewProber(standinID, false, time.Second), ui.HTTPPort)
	if s, ok := passFor(t, f, 3*time.Second); !ok || !s.V6 {
		t.Fatalf("bound %v %t", s, ok)
	}
}

// TestStandInHistoryServer: a History Server listing exactly one in-progress application (its
// event log still being written) is never bound, on the Pod network too.
func TestStandInHistoryServer(t *testing.T) {
	hs := startUI(t, fakespark.Options{History: []fakespark.App{{ID: standinID.AppID}}}, "127.0.0.1", 0, nil)
	f, v := standinFinder(t, sparkapi.NewProber(standinID, false, time.Second), hs.HTTPPort)
	if s, ok := passFor(t, f, time.Second); ok {
		t.Fatalf("bound the History Server at %v", s)
	}
	if r := v.last(hs.HTTPPort); r.Verdict != sparkapi.NotLive || !strings.Contains(r.Detail, "History Server") {
		t.Fatalf("verdict %s (%s)", r.Verdict, r.Detail)
	}
}

// TestStandInTLSProxyRedirect: with spark.ui.proxyRedirectUri, ProxyRedirectHandler rewrites
// the plain connector's redirect too (<proxyRedirectUri><uiRoot><path>, no https, no port): a
// runtime configured for plain HTTP still reports TLS on, not a single sign-on filter.
func TestStandInTLSProxyRedirect(t *testing.T) {
	cert, err := fakespark.NewCert("spark-driver", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ui := startUI(t, fakespark.Options{ProxyRedirectURI: "https://gateway.example/", ProxyBase: "/spark/ns/app"}, "127.0.0.1", 0, &fakespark.SSL{Cert: cert})
	f, v := standinFinder(t, sparkapi.NewProber(standinID, false, time.Second), ui.HTTPPort)
	if s, ok := passFor(t, f, 500*time.Millisecond); ok {
		t.Fatalf("bound %v", s)
	}
	r := v.last(ui.HTTPPort)
	if r.Verdict != sparkapi.TLSMismatch || !strings.Contains(r.Detail, "https://gateway.example/spark/ns/app/api/v1/applications") {
		t.Fatalf("verdict %s (%s), want tls-mismatch naming the rewritten redirect", r.Verdict, r.Detail)
	}
}
