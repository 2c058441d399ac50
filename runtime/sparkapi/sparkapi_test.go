package sparkapi_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	return probeAs(t, sparkapi.NewProber(me, tls, 2*time.Second), hostport)
}

func probeAs(t *testing.T, p *sparkapi.Prober, hostport string) sparkapi.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
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

// TestProbeIdentity: what counts as this application's UI, on the Pod network and under
// hostNetwork, for the ids Spark really reports (SparkContext.scala: spark.app.id, else
// local-<millis> in Spark 3 driver-only mode, spark-application-<millis> in client mode).
func TestProbeIdentity(t *testing.T) {
	const (
		local  = "local-1767225600000"
		client = "spark-application-1767225600000"
	)
	hs := []fakespark.App{
		{ID: "spark-1111", Completed: true, PodName: "a-driver", Namespace: me.Namespace},
		{ID: me.AppID, PodName: me.PodName, Namespace: me.Namespace}, // this application, in progress
		{ID: "spark-2222", PodName: "b-driver", Namespace: me.Namespace},
	}
	for _, tc := range []struct {
		name       string
		opts       fakespark.Options
		pod, host  sparkapi.Verdict // verdict on the Pod network, under hostNetwork
		wantDetail string           // in the hostNetwork verdict's detail
	}{
		{"starting up", fakespark.Options{AppID: me.AppID, State: fakespark.StartingUp}, sparkapi.StartingUp, sparkapi.StartingUp, "starting up"},
		{"cluster mode: app id", fakespark.Options{AppID: me.AppID, PodName: me.PodName, State: fakespark.Ready}, sparkapi.Match, sparkapi.Match, "id " + me.AppID},
		{"Spark 4 driver-only: spark.app.id, no pod name", fakespark.Options{AppID: me.AppID, State: fakespark.Ready}, sparkapi.Match, sparkapi.Match, "id " + me.AppID},
		{"Spark 3 driver-only: local id, pod name and namespace", fakespark.Options{AppID: local, PodName: me.PodName, Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.Match, sparkapi.Match, "this driver Pod"},
		{"local id, pod name, no namespace listed", fakespark.Options{AppID: local, PodName: me.PodName, State: fakespark.Ready}, sparkapi.Match, sparkapi.Match, "this driver Pod"},
		{"client mode: no pod name property", fakespark.Options{AppID: client, State: fakespark.Ready}, sparkapi.Match, sparkapi.Unproven, "has no spark.kubernetes.driver.pod.name"},
		{"same pod name in another namespace", fakespark.Options{AppID: local, PodName: me.PodName, Namespace: "other", State: fakespark.Ready}, sparkapi.Match, sparkapi.OtherApp, "other/wc-driver"},
		{"another driver Pod", fakespark.Options{AppID: "spark-9999", PodName: "other-driver", Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.Match, sparkapi.OtherApp, "analytics/other-driver"},
		{"pod name redacted (a name containing token)", fakespark.Options{AppID: client, PodName: "token-sync-driver", Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.Match, sparkapi.Unproven, "redacted"},
		{"namespace redacted", fakespark.Options{AppID: local, PodName: me.PodName, Namespace: "secret-jobs", State: fakespark.Ready}, sparkapi.Match, sparkapi.Unproven, "redacted"},
		{"completed attempt", fakespark.Options{AppID: me.AppID, PodName: me.PodName, Completed: true, State: fakespark.Ready}, sparkapi.NotLive, sparkapi.NotLive, "completed"},
		{"History Server listing this application in progress", fakespark.Options{History: hs, State: fakespark.Ready}, sparkapi.NotLive, sparkapi.NotLive, "lists 3 applications"},
		// The listing alone is a live UI's: only the root page ("/": HistoryPage, 200) tells.
		{"History Server listing only this application, in progress", fakespark.Options{History: hs[1:2], State: fakespark.Ready}, sparkapi.NotLive, sparkapi.NotLive, "History Server"},
		{"History Server listing only another application, in progress", fakespark.Options{History: hs[2:], State: fakespark.Ready}, sparkapi.NotLive, sparkapi.OtherApp, "b-driver"},
		{"handlers being attached (404)", fakespark.Options{AppID: me.AppID, State: fakespark.Attaching}, sparkapi.NotSpark, sparkapi.NotSpark, "404"},
		{"environment not stored yet (404)", fakespark.Options{AppID: local, PodName: me.PodName, State: fakespark.EnvPending}, sparkapi.Match, sparkapi.StartingUp, "environment not stored yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tls := range []bool{false, true} {
				o := tc.opts
				o.TLS = tls
				s := fake(t, o)
				if r := probe(t, tls, s.Addr); r.Verdict != tc.pod {
					t.Errorf("Pod network, tls=%t: verdict %s (%s), want %s", tls, r.Verdict, r.Detail, tc.pod)
				}
				host := me
				host.HostNetwork = true
				r := probeAs(t, sparkapi.NewProber(host, tls, 2*time.Second), s.Addr)
				if r.Verdict != tc.host || !strings.Contains(r.Detail, tc.wantDetail) {
					t.Errorf("hostNetwork, tls=%t: verdict %s (%s), want %s (%q)", tls, r.Verdict, r.Detail, tc.host, tc.wantDetail)
				}
			}
		})
	}
}

// TestProbeUnknownID: a run whose id is not known (--app-id empty: a workload's Pod without
// spark-app-selector) matches no id, not even an empty one a UI might list: on the Pod network
// any live UI is this Pod's; under hostNetwork only spark.kubernetes.driver.pod.name proves it.
func TestProbeUnknownID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      fakespark.Options
		pod, host sparkapi.Verdict
		detail    string
	}{
		{"UI lists an empty id, no pod name", fakespark.Options{AppID: "", State: fakespark.Ready}, sparkapi.Match, sparkapi.Unproven, "this Pod's application id is not known"},
		{"another driver's UI", fakespark.Options{AppID: "spark-9999", PodName: "other-driver", Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.Match, sparkapi.OtherApp, "analytics/other-driver"},
		{"this Pod's UI by name", fakespark.Options{AppID: "spark-application-1767225600000", PodName: me.PodName, Namespace: me.Namespace, State: fakespark.Ready}, sparkapi.Match, sparkapi.Match, "this driver Pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fake(t, tc.opts)
			id := me
			id.AppID = ""
			if r := probeAs(t, sparkapi.NewProber(id, false, 2*time.Second), s.Addr); r.Verdict != tc.pod {
				t.Errorf("Pod network: verdict %s (%s), want %s", r.Verdict, r.Detail, tc.pod)
			}
			id.HostNetwork = true
			r := probeAs(t, sparkapi.NewProber(id, false, 2*time.Second), s.Addr)
			if r.Verdict != tc.host || !strings.Contains(r.Detail, tc.detail) {
				t.Errorf("hostNetwork: verdict %s (%s), want %s (%q)", r.Verdict, r.Detail, tc.host, tc.detail)
			}
		})
	}
}

// TestProbeFilters: authentication filters refuse anonymous probes (never bound); the
// configured credential is sent only after a refusal, and re-read when its file changes.
func TestProbeFilters(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p+".tmp", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		// Renamed into place, as a Secret volume's symlink swap gives a new inode.
		if err := os.Rename(p+".tmp", p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bearer := write("token", "jws-1\n")
	header := write("header", "Cookie: session=abc\n")
	wrongHeader := write("wrong", "Cookie: session=nope\n")
	const filters = "org.apache.spark.ui.JWSFilter"
	for _, tc := range []struct {
		name       string
		opts       fakespark.Options
		cred       *sparkapi.Credential
		want       sparkapi.Verdict
		wantDetail []string
	}{
		{"JWS, no credential", fakespark.Options{Filter: fakespark.JWS, Token: "jws-1"}, nil, sparkapi.Denied,
			[]string{"403", "JWSFilter", "spark.ui.filters=" + filters, "--auth-bearer-file"}},
		{"JWS, bearer file", fakespark.Options{Filter: fakespark.JWS, Token: "jws-1"}, sparkapi.BearerFile(bearer), sparkapi.Match, nil},
		{"JWS, wrong token", fakespark.Options{Filter: fakespark.JWS, Token: "jws-2"}, sparkapi.BearerFile(bearer), sparkapi.Denied,
			[]string{"403", "refused the credential from " + bearer}},
		{"JWS, missing credential file", fakespark.Options{Filter: fakespark.JWS, Token: "jws-1"}, sparkapi.BearerFile(filepath.Join(dir, "missing")), sparkapi.Denied,
			[]string{"403", "credential file", "no such file"}},
		{"SPNEGO, no credential", fakespark.Options{Filter: fakespark.SPNEGO, Header: [2]string{"Cookie", "session=abc"}}, nil, sparkapi.Denied,
			[]string{"401", "Negotiate", "SPNEGO"}},
		{"SPNEGO, header file", fakespark.Options{Filter: fakespark.SPNEGO, Header: [2]string{"Cookie", "session=abc"}}, sparkapi.HeaderFile(header), sparkapi.Match, nil},
		{"SSO, no credential", fakespark.Options{Filter: fakespark.SSO, Header: [2]string{"Cookie", "session=abc"}}, nil, sparkapi.Denied,
			[]string{"redirects to https://sso.example.com/login", "single sign-on"}},
		{"SSO, header file", fakespark.Options{Filter: fakespark.SSO, Header: [2]string{"Cookie", "session=abc"}}, sparkapi.HeaderFile(header), sparkapi.Match, nil},
		{"SSO, wrong session", fakespark.Options{Filter: fakespark.SSO, Header: [2]string{"Cookie", "session=abc"}}, sparkapi.HeaderFile(wrongHeader), sparkapi.Denied,
			[]string{"refused the credential"}},
		{"no filter, credential configured: not sent", fakespark.Options{}, sparkapi.BearerFile(bearer), sparkapi.Match, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.AppID, o.State = me.AppID, fakespark.Ready
			s := fake(t, o)
			p := sparkapi.NewProber(me, false, 2*time.Second)
			p.Filters, p.Cred = filters, tc.cred
			r := probeAs(t, p, s.Addr)
			if r.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Detail, tc.want)
			}
			for _, d := range tc.wantDetail {
				if !strings.Contains(r.Detail, d) {
					t.Errorf("detail %q lacks %q", r.Detail, d)
				}
			}
		})
	}

	// Rotation: the Secret's new token is used at the next probe, without a restart.
	s := fake(t, fakespark.Options{AppID: me.AppID, State: fakespark.Ready, Filter: fakespark.JWS, Token: "jws-2"})
	p := sparkapi.NewProber(me, false, 2*time.Second)
	p.Cred = sparkapi.BearerFile(bearer)
	if r := probeAs(t, p, s.Addr); r.Verdict != sparkapi.Denied {
		t.Fatalf("old token: %s (%s)", r.Verdict, r.Detail)
	}
	write("token", "jws-2\n")
	if r := probeAs(t, p, s.Addr); r.Verdict != sparkapi.Match {
		t.Fatalf("rotated token: %s (%s)", r.Verdict, r.Detail)
	}
}

// TestCredentialFiles: what the files may hold.
func TestCredentialFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content    string
		bearer     bool
		name, val  string
		wantErrSub string
	}{
		{"abc.def.ghi\n", true, "Authorization", "Bearer abc.def.ghi", ""},
		{"  \n", true, "", "", "want one bearer token"},
		{"a\nb\n", true, "", "", "want one bearer token"},
		{"\nx-api-key: k1 \n", false, "X-Api-Key", "k1", ""},
		{"Authorization: Basic dTpw", false, "Authorization", "Basic dTpw", ""},
		{"no colon", false, "", "", "Name: value"},
		{"bad name: v", false, "", "", "Name: value"},
		{"", false, "", "", "empty"},
	} {
		p := filepath.Join(dir, "c")
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		c := sparkapi.HeaderFile(p)
		if tc.bearer {
			c = sparkapi.BearerFile(p)
		}
		n, v, err := c.Header()
		if tc.wantErrSub != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
				t.Errorf("%q: err %v, want %q", tc.content, err, tc.wantErrSub)
			}
			continue
		}
		if err != nil || n != tc.name || v != tc.val {
			t.Errorf("%q: %q %q %v, want %q %q", tc.content, n, v, err, tc.name, tc.val)
		}
		_ = os.Remove(p)
	}
}

// TLS on at one end only is a TLSMismatch whose detail says which end, never a silent
// NotSpark (issue 31: TLS turned on by spark-defaults.conf left the runtime "still waiting").
func TestProbeWrongScheme(t *testing.T) {
	plain := fake(t, fakespark.Options{AppID: me.AppID, State: fakespark.Ready})
	if r := probe(t, true, plain.Addr); r.Verdict != sparkapi.TLSMismatch || !strings.Contains(r.Detail, "answers plain HTTP") {
		t.Errorf("https to a plain UI: %s (%s)", r.Verdict, r.Detail)
	}
	secure := fake(t, fakespark.Options{TLS: true, AppID: me.AppID, State: fakespark.Ready})
	if r := probe(t, false, secure.Addr); r.Verdict != sparkapi.NotSpark {
		// Go's TLS server answers a plain request with a plain 400, not an alert.
		t.Errorf("http to a TLS UI: %s (%s)", r.Verdict, r.Detail)
	}
	// The plain connector of a TLS UI redirects to the same path on the HTTPS port
	// (JettyUtils.createRedirectHttpsHandler): not the port to bind, and the reason says so.
	red, err := fakespark.StartRedirector("", secure.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer red.Close()
	r := probe(t, false, "127.0.0.1:"+itoa(red.Port))
	if r.Verdict != sparkapi.TLSMismatch || !strings.Contains(r.Detail, "https://") || !strings.Contains(r.Detail, "configured for plain HTTP") {
		t.Errorf("redirecting connector: %s (%s)", r.Verdict, r.Detail)
	}
}

// needClientAuth: Jetty aborts the handshake of a client without a certificate.
func TestProbeClientAuth(t *testing.T) {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	s.StartTLS()
	defer s.Close()
	r := probe(t, true, strings.TrimPrefix(s.URL, "https://"))
	if r.Verdict != sparkapi.TLSMismatch || !strings.Contains(r.Detail, "needClientAuth") {
		t.Errorf("client auth: %s (%s)", r.Verdict, r.Detail)
	}
}

func TestProbeOddAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    sparkapi.Verdict
	}{
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }, sparkapi.Denied},
		{"403", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }, sparkapi.Denied},
		{"redirect elsewhere (a filter's login page)", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/login", http.StatusFound)
		}, sparkapi.Denied},
		{"404 (another web server)", http.NotFound, sparkapi.NotSpark},
		// SparkUI.attachAllHandlers: the root context's redirect is attached before the
		// API's, so /api/v1 answers 302 to /jobs/ for a moment (issue 31, fix 3).
		{"302 to /jobs/ while handlers are attached", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+r.Host+"/jobs/", http.StatusFound)
		}, sparkapi.StartingUp},
		{"302 to <proxyBase>/jobs/ while handlers are attached", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://spark.example.com/apps/wordcount/jobs/", http.StatusFound)
		}, sparkapi.StartingUp},
		{"302 to a login page ending in jobs", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://sso.example.com/login?next=/jobs", http.StatusFound)
		}, sparkapi.Denied},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, sparkapi.Failing},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, sparkapi.Failing},
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
		}, sparkapi.NotLive},
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

// TestProbeUnderProxyBase: spark.ui.proxyBase (a route with a path prefix) leaves the REST
// API at its root paths: the probe finds and verifies the UI as without it.
func TestProbeUnderProxyBase(t *testing.T) {
	for _, o := range []fakespark.Options{
		{AppID: me.AppID, PodName: me.PodName, Namespace: me.Namespace, State: fakespark.Ready, ProxyBase: "/apps/wordcount"},
		{AppID: me.AppID, PodName: me.PodName, Namespace: me.Namespace, State: fakespark.Ready, ProxyBase: "/apps/wordcount", ProxyRedirectURI: "https://spark.example.com"},
		{AppID: me.AppID, State: fakespark.Ready, ProxyBase: "/apps/wordcount", TLS: true},
	} {
		s := fake(t, o)
		if r := probe(t, o.TLS, s.Addr); r.Verdict != sparkapi.Match || r.AppID != me.AppID {
			t.Errorf("%+v: %v %s", o, r.Verdict, r.Detail)
		}
	}
}

// TestProbeSparkStartup: through every state of a starting UI (fakespark.SparkStartup) the
// probe never refuses (Denied) and never takes the UI for another program except in the two
// 404 windows, which the Finder reads as "starting" once the starting-up page was seen.
func TestProbeSparkStartup(t *testing.T) {
	ui := fake(t, fakespark.Options{AppID: me.AppID, PodName: me.PodName, Namespace: me.Namespace, State: fakespark.Bare})
	for _, tc := range []struct {
		state fakespark.State
		want  sparkapi.Verdict
	}{
		{fakespark.Bare, sparkapi.NotSpark},
		{fakespark.StartingUp, sparkapi.StartingUp},
		{fakespark.Attaching, sparkapi.NotSpark},
		{fakespark.AttachingAPI, sparkapi.StartingUp},
		{fakespark.EnvPending, sparkapi.Match},
		{fakespark.Ready, sparkapi.Match},
	} {
		ui.Set(tc.state)
		if r := probe(t, false, ui.Addr); r.Verdict != tc.want || (tc.want == sparkapi.NotSpark && r.Status != http.StatusNotFound) {
			t.Errorf("state %d: %s %d (%s), want %s", tc.state, r.Verdict, r.Status, r.Detail, tc.want)
		}
	}
}
