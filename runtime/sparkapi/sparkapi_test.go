package sparkapi_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

var me = sparkapi.Identity{AppID: "spark-0123", PodName: "wc-driver", Namespace: "analytics"}

func probe(t *testing.T, tls bool, hostport string) sparkapi.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := sparkapi.NewProber(me, tls, 2*time.Second)
	defer p.CloseIdle()
	return p.Probe(ctx, hostport)
}

func fake(t *testing.T, o fakespark.Options) *fakespark.Server {
	t.Helper()
	s, err := fakespark.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestProbeSparkShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts fakespark.Options
		want sparkapi.Verdict
	}{
		{"starting up", fakespark.Options{AppID: me.AppID, State: fakespark.StartingUp}, sparkapi.StartingUp},
		{"app id", fakespark.Options{AppID: me.AppID, State: fakespark.Ready}, sparkapi.Match},
		{"driver-only: pod name and namespace", fakespark.Options{AppID: "local-1767225600000", PodName: me.PodName, Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.Match},
		{"driver-only: pod name, no namespace listed", fakespark.Options{AppID: "local-1767225600000", PodName: me.PodName, State: fakespark.Ready}, sparkapi.Match},
		{"same pod name in another namespace", fakespark.Options{AppID: "local-1767225600000", PodName: me.PodName, Namespace: "other", State: fakespark.Ready}, sparkapi.OtherApp},
		{"another application", fakespark.Options{AppID: "spark-9999", PodName: "other-driver", Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.OtherApp},
		{"UI ACLs", fakespark.Options{AppID: me.AppID, State: fakespark.Denied}, sparkapi.Denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tls := range []bool{false, true} {
				o := tc.opts
				o.TLS = tls
				s := fake(t, o)
				r := probe(t, tls, s.Addr)
				if r.Verdict != tc.want {
					t.Errorf("tls=%t: verdict %s (%s), want %s", tls, r.Verdict, r.Detail, tc.want)
				}
			}
		})
	}
}

func TestProbeWrongScheme(t *testing.T) {
	plain := fake(t, fakespark.Options{AppID: me.AppID, State: fakespark.Ready})
	if r := probe(t, true, plain.Addr); r.Verdict != sparkapi.NotSpark {
		t.Errorf("https to a plain UI: %s (%s)", r.Verdict, r.Detail)
	}
	secure := fake(t, fakespark.Options{TLS: true, AppID: me.AppID, State: fakespark.Ready})
	if r := probe(t, false, secure.Addr); r.Verdict != sparkapi.NotSpark {
		t.Errorf("http to a TLS UI: %s (%s)", r.Verdict, r.Detail)
	}
	// The plain connector of a TLS UI redirects: not the port to bind.
	red, err := fakespark.StartRedirector("", secure.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer red.Close()
	r := probe(t, false, "127.0.0.1:"+itoa(red.Port))
	if r.Verdict != sparkapi.NotSpark || !strings.Contains(r.Detail, "redirect") {
		t.Errorf("redirecting connector: %s (%s)", r.Verdict, r.Detail)
	}
}

func TestProbeOddAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    sparkapi.Verdict
	}{
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }, sparkapi.Denied},
		{"404 (another web server)", http.NotFound, sparkapi.NotSpark},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, sparkapi.StartingUp},
		{"other HTML", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>hello</html>"))
		}, sparkapi.NotSpark},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{{{")) }, sparkapi.NotSpark},
		{"empty list", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("[]")) }, sparkapi.StartingUp},
		{"history server", func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/api/v1/applications":
				_, _ = w.Write([]byte(`[{"id":"a1"},{"id":"a2"},{"id":"a3"}]`))
			default:
				_, _ = w.Write([]byte(`{"sparkProperties":[["spark.kubernetes.driver.pod.name","x"]]}`))
			}
		}, sparkapi.OtherApp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewServer(tc.handler)
			defer s.Close()
			r := probe(t, false, strings.TrimPrefix(s.URL, "http://"))
			if r.Verdict != tc.want {
				t.Errorf("verdict %s (%s), want %s", r.Verdict, r.Detail, tc.want)
			}
		})
	}
}

func TestProbeTransportFailures(t *testing.T) {
	// Nothing listens: unknown (and reported unreachable, so another address is tried).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	if r := probe(t, false, addr); r.Verdict != sparkapi.Unknown || !r.Unreachable() {
		t.Errorf("closed port: %s (%s)", r.Verdict, r.Detail)
	}
	// A server that hangs up on HTTP (Spark's RPC port): not Spark's REST API.
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 16)
			_, _ = c.Read(buf)
			_ = c.Close()
		}
	}()
	if r := probe(t, false, l.Addr().String()); r.Verdict != sparkapi.NotSpark {
		t.Errorf("hang-up: %s (%s)", r.Verdict, r.Detail)
	}
	// A server that never answers: the probe's timeout, unknown.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	p := sparkapi.NewProber(me, false, 200*time.Millisecond)
	start := time.Now()
	r := p.Probe(context.Background(), silent.Addr().String())
	if r.Verdict != sparkapi.Unknown || time.Since(start) > 2*time.Second {
		t.Errorf("silent server: %s (%s) after %s", r.Verdict, r.Detail, time.Since(start))
	}
}

func TestVerdictString(t *testing.T) {
	if sparkapi.Match.String() != "match" || sparkapi.Verdict(42).String() != "verdict(42)" {
		t.Error(sparkapi.Match.String(), sparkapi.Verdict(42).String())
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
