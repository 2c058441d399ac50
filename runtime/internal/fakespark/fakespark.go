// Package fakespark is a stand-in Spark UI for tests: an HTTP(S) server answering what Spark's
// UI answers, modelled on Spark's source (3.5, 4.0, 4.1):
//
//   - "Spark is starting up" on every path until the UI is ready: the init handler of
//     core/src/main/scala/org/apache/spark/ui/SparkUI.scala;
//   - two 404 windows: while SparkUI.attachAllHandlers has removed that handler and not yet
//     added the others (Jetty's own 404 page), and while the REST API lists the application but
//     its environment is not stored yet (status/api/v1/OneApplicationResource.scala answers
//     404 for a missing entity);
//   - GET /api/v1/applications (status/api/v1/ApplicationListResource.scala): a live UI lists
//     exactly its own application, one attempt, completed=false; a History Server
//     (deploy/history/HistoryServer.scala) lists every application of its event logs,
//     in-progress ones included;
//   - GET /api/v1/applications/<id>/environment: sparkProperties, with values redacted by
//     spark.redaction.regex when the key or the value matches (util/Utils.scala redact,
//     REDACTION_REPLACEMENT_TEXT), and spark.kubernetes.driver.pod.name only when it is set;
//   - spark.ui.proxyBase (and spark.ui.proxyRedirectUri) change only the links and
//     redirects Spark writes, never where it serves: every handler, the REST API included, is
//     attached at its root path (ui/SparkUI.scala initialize, ApiRootResource's "/api";
//     JettyUtils.createServletHandler prefixes only a History Server's basePath). Links are
//     prefixed with UIUtils.uiRoot: spark.ui.proxyBase, else $APPLICATION_WEB_PROXY_BASE (YARN's,
//     not modelled), else the request's X-Forwarded-Context header (ui/UIUtils.scala). "/" redirects to "/jobs/" resolved
//     against the request URL (JettyUtils.createRedirectHandler), and Jetty redirects a
//     context root without its slash ("/jobs") to "/jobs/"; with spark.ui.proxyRedirectUri
//     the ProxyRedirectHandler rewrites every redirect to <proxyRedirectUri><uiRoot><path>
//     (JettyUtils.scala, Spark 4.0);
//   - filters of spark.ui.filters: ui/JWSFilter.scala (403 without a valid bearer token),
//     a SPNEGO filter (401 with WWW-Authenticate: Negotiate), a single-sign-on filter (302 to
//     its login page);
//   - the connectors as JettyUtils.startJettyServer binds them, with startServiceOnPort's
//     retries (spark.go: StartUI, BindPort, UserPort; certs.go: certificates made per test),
//     the plain connector that only redirects under SSL (connectors.go), a History Server's
//     root page (history.go), the startup sequence (startup.go), and a JVM's faults: GC pauses
//     and an exhausted thread pool (pause.go).
//
// Each behaviour of Spark modelled here or in cmd/fakespark-ui is marked "// conformance: <id>"
// next to its code; docs/spark-conformance.md has one row per id (internal/docstest fails
// otherwise), naming Spark's source and the test that pins it. A new behaviour gets a marker
// and a row.
package fakespark

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// State is what the UI answers.
type State int

const (
	// StartingUp: every path answers 200 text/html "Spark is starting up…" (SparkUI.scala's
	// init handler).
	StartingUp State = iota
	// Ready: the REST API answers.
	Ready
	// Attaching: every path answers Jetty's 404 page: SparkUI.attachAllHandlers removed the
	// init handler and has not added the UI's handlers yet.
	Attaching
	// EnvPending: the application is listed but its environment is not stored yet: the
	// environment endpoint answers 404.
	EnvPending
	// Bare: WebUI.bind has opened the socket and SparkUI has not attached its init handler
	// yet: Jetty's own 404 on every path, no filter.
	Bare
	// AttachingAPI: attachAllHandlers has added the tabs and the root context's redirect but
	// not ApiRootResource's "/api" context: /api/v1/… answers 302 to /jobs/.
	AttachingAPI
)

// Filter is an authentication filter in spark.ui.filters, in front of every path.
type Filter int

const (
	NoFilter Filter = iota
	// JWS is Spark's org.apache.spark.ui.JWSFilter: 403 unless "Authorization: Bearer <jws>"
	// carries a valid token (Options.Token here).
	JWS
	// SPNEGO is Hadoop's AuthenticationFilter with Kerberos: 401 with
	// "WWW-Authenticate: Negotiate" unless authenticated (Options.Header here).
	SPNEGO
	// SSO is a single-sign-on filter: 302 to its login page unless the request carries the
	// session (Options.Header here, e.g. a cookie).
	SSO
)

// RedactionReplacement is Spark's Utils.REDACTION_REPLACEMENT_TEXT.
const RedactionReplacement = "*********(redacted)"

// DefaultRedactionRegex is spark.redaction.regex's default (core/.../internal/config/package.scala).
const DefaultRedactionRegex = `(?i)secret|password|token|access[.]?key`

// App is one application a History Server lists.
type App struct {
	ID        string
	Completed bool
	PodName   string // spark.kubernetes.driver.pod.name in its environment; "" = not set
	Namespace string // spark.kubernetes.namespace; "" = not set
}

// Options describe the application behind the UI.
type Options struct {
	Addr  string // listen address; "" = 127.0.0.1:0
	TLS   bool
	AppID string // spark.app.id: the listed id (cluster mode: spark-app-selector; Spark 3 driver-only: local-<millis>; client mode unset: spark-application-<millis>)
	// PodName is spark.kubernetes.driver.pod.name in the environment; "" = not set (client
	// mode usually).
	PodName string
	// Namespace is spark.kubernetes.namespace in the environment; "" = not listed.
	Namespace string
	// Completed marks the attempt completed. A live UI never does (SparkUI.getApplicationInfoList
	// writes completed = false, endTime -1, and SparkContext.stop stops the UI right after
	// posting ApplicationEnd): only a History Server's listing or something else imitating
	// the REST API shows it; kept to test the runtime's refusal of it.
	Completed bool
	// History makes it a History Server listing these applications (AppID etc. unused).
	History []App
	State   State // initial state
	// RedactionRegex is spark.redaction.regex; "" = Spark's default.
	RedactionRegex string
	Filter         Filter
	Token          string    // the bearer token JWS accepts
	Header         [2]string // the header (name, value) SPNEGO and SSO accept
	// ProxyBase is the spark.ui.proxyBase *system property* ("" = not set): UIUtils.uiRoot
	// reads sys.props, which spark-submit sets from the conf and SparkSession.builder.config
	// does not. ProxyRedirectURI is spark.ui.proxyRedirectUri (read from the conf).
	ProxyBase, ProxyRedirectURI string
	// Startup, when set, is the sequence of states the UI goes through after Start, each
	// held for its duration (the last one stays): see SparkStartup.
	// conformance: slow-start
	Startup []Phase
	// Hang: accept connections and never answer (a UI thread pool exhausted).
	// conformance: pool-exhausted
	Hang bool
	// TLSConfig, with TLS, is the HTTPS connector's (StartUI sets it from SSL); nil = Go's
	// test certificate.
	TLSConfig *tls.Config
}

// Server is a running stand-in UI.
type Server struct {
	opts    Options
	redact  *regexp.Regexp
	srv     *httptest.Server
	state   atomic.Int32
	mu      sync.Mutex
	byAgent map[string]int64
	seen    []Request
	Port    int
	Addr    string // host:port it listens on
	once    sync.Once
	stop    chan struct{} // closed by Close: ends the startup sequence
	// pausedUntil (unix nanoseconds) ends a GC pause (Pause); hang is Options.Hang, settable.
	pausedUntil atomic.Int64
	hang        atomic.Bool
}

// Start listens and serves.
func Start(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	re := opts.RedactionRegex
	if re == "" {
		re = DefaultRedactionRegex
	}
	redact, err := regexp.Compile(re)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, redact: redact}
	s.hang.Store(opts.Hang)
	s.state.Store(int32(opts.State))
	if len(opts.Startup) > 0 {
		s.state.Store(int32(opts.Startup[0].State))
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	_ = s.srv.Listener.Close()
	s.srv.Listener = ln
	if opts.TLS {
		s.srv.TLS = opts.TLSConfig
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	s.Addr = ln.Addr().String()
	s.Port = ln.Addr().(*net.TCPAddr).Port
	if len(opts.Startup) > 0 {
		s.stop = make(chan struct{})
		go s.runStartup(opts.Startup)
	}
	return s, nil
}

// Set changes what the UI answers.
func (s *Server) Set(st State) { s.state.Store(int32(st)) }

// RequestsFrom is the number of requests whose User-Agent contains agent (the runtime names
// its driver Pod there: tests running side by side can tell their probes apart).
func (s *Server) RequestsFrom(agent string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for ua, c := range s.byAgent {
		if strings.Contains(ua, agent) {
			n += c
		}
	}
	return n
}

// Request is a request as the UI received it: after whatever a proxy in front of it
// rewrote (path prefix, headers such as X-Forwarded-Context).
type Request struct {
	Path   string
	Header http.Header
}

// Requests are the requests received so far whose User-Agent contains agent ("" = all), in
// order.
func (s *Server) Requests(agent string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.seen {
		if strings.Contains(r.Header.Get("User-Agent"), agent) {
			out = append(out, r)
		}
	}
	return out
}

// Close stops listening (the socket's inode disappears) and waits for requests in flight.
func (s *Server) Close() {
	s.once.Do(func() {
		if s.stop != nil {
			close(s.stop)
		}
		s.srv.Close()
	})
}

// StartingUpPage is the body of SparkUI.scala's init handler, served with
// text/html;charset=utf-8 on every path until the UI is ready.
const StartingUpPage = "Spark is starting up. Please wait a while until it's ready."

// jetty404 is what Jetty answers on a path no handler serves.
const jetty404 = "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=ISO-8859-1\"/>\n" +
	"<title>Error 404 Not Found</title>\n</head>\n<body><h2>HTTP ERROR 404 Not Found</h2>\n</body>\n</html>\n"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.byAgent == nil {
		s.byAgent = map[string]int64{}
	}
	s.byAgent[r.UserAgent()]++
	s.seen = append(s.seen, Request{Path: r.URL.Path, Header: r.Header.Clone()})
	s.mu.Unlock()
	if !s.paused(r.Context().Done()) {
		return
	}
	state := State(s.state.Load())
	if s.hang.Load() {
		// A UI thread pool exhausted: the connection was accepted, no answer comes.
		<-r.Context().Done()
		return
	}
	if state == Bare || state == Attaching {
		// No context is attached: Jetty's ContextHandlerCollection finds none and the
		// server answers 404 itself; filters live in the contexts, so none runs.
		w.Header().Set("Content-Type", "text/html;charset=iso-8859-1")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(jetty404))
		return
	}
	switch r.URL.Path {
	case "/jobs", "/stages", "/storage", "/environment", "/executors", "/static":
		if state != StartingUp && len(s.opts.History) == 0 {
			// Jetty's ContextHandler redirects a context root without its slash before
			// the context's filter chain runs.
			s.redirect(w, r, r.URL.Path+"/")
			return
		}
	}
	// Filters run in every context Spark attaches (JettyUtils.addFilters via
	// ServerInfo.addHandler), the starting-up page's included.
	if !s.filter(w, r) {
		return
	}
	switch state {
	case StartingUp:
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		_, _ = w.Write([]byte(StartingUpPage))
		return
	case AttachingAPI:
		if strings.HasPrefix(r.URL.Path, "/api/") {
			// The root context's redirect servlet answers: the "/api" context is not
			// attached yet (SparkUI.initialize's order).
			s.redirect(w, r, "/jobs/")
			return
		}
	}
	if s.historyPage(w, r) {
		return
	}
	apps := s.apps()
	switch {
	case r.URL.Path == "/api/v1/applications" || r.URL.Path == "/api/v1/applications/":
		list := make([]any, 0, len(apps))
		for _, a := range apps {
			list = append(list, listed(a))
		}
		writeJSON(w, list)
		return
	case strings.HasPrefix(r.URL.Path, "/api/v1/applications/") && strings.HasSuffix(r.URL.Path, "/environment"):
		id, _ := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/applications/"), "/environment"))
		for _, a := range apps {
			if a.ID == id && state != EnvPending {
				writeJSON(w, map[string]any{
					"runtime":           map[string]any{"javaVersion": "17.0.12", "javaHome": "/opt/java/openjdk", "scalaVersion": "version 2.13.14"},
					"sparkProperties":   s.properties(a),
					"hadoopProperties":  [][]string{},
					"systemProperties":  [][]string{{"java.version", "17.0.12"}},
					"metricsProperties": [][]string{},
					"classpathEntries":  [][]string{{"/opt/spark/jars/spark-core_2.13-4.0.0.jar", "System Classpath"}},
					"resourceProfiles":  []any{},
				})
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		http.Error(w, "no such app: "+id, http.StatusNotFound)
		return
	case strings.HasPrefix(r.URL.Path, "/api/v1/"):
		w.Header().Set("Content-Type", "text/plain")
		http.Error(w, "unknown resource", http.StatusNotFound)
		return
	}
	if !uiPage(r.URL.Path) {
		// "/" and every path no other context serves (a path under the proxy base among
		// them): the root context's servlet, createRedirectHandler("/", "/jobs/") mapped at
		// "/" (JettyUtils.createServletHandler), which Jetty's ContextHandlerCollection picks
		// for any target without a longer context path.
		// conformance: catch-all-redirect
		s.redirect(w, r, "/jobs/")
		return
	}
	root := s.uiRoot(r)
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><link rel="stylesheet" href="` + root + `/static/webui.css" type="text/css"/></head>` +
		`<body><a href="` + root + `/jobs/">Jobs</a> <a href="` + root + `/stages/">Stages</a> Spark Jobs</body></html>`))
}

// uiPage: the UI's tabs and static files, under the contexts SparkUI attaches at the root.
func uiPage(path string) bool {
	for _, p := range []string{"/jobs/", "/stages/", "/storage/", "/environment/", "/executors/", "/static/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// uiRoot is UIUtils.uiRoot: spark.ui.proxyBase, else X-Forwarded-Context, else "".
// conformance: proxy-base
func (s *Server) uiRoot(r *http.Request) string {
	if s.opts.ProxyBase != "" {
		return s.opts.ProxyBase
	}
	return r.Header.Get("X-Forwarded-Context")
}

func (s *Server) apps() []App {
	if len(s.opts.History) > 0 {
		return s.opts.History
	}
	return []App{{ID: s.opts.AppID, Completed: s.opts.Completed, PodName: s.opts.PodName, Namespace: s.opts.Namespace}}
}

// listed is an ApplicationInfo as the REST API writes it.
// conformance: app-listing
func listed(a App) map[string]any {
	end, endEpoch := "1969-12-31T23:59:59.999GMT", int64(-1)
	if a.Completed {
		end, endEpoch = "2026-01-01T01:00:00.000GMT", 1767229200000
	}
	return map[string]any{
		"id":   a.ID,
		"name": "stand-in",
		"attempts": []any{map[string]any{
			"startTime": "2026-01-01T00:00:00.000GMT", "endTime": end,
			"lastUpdated": "2026-01-01T00:00:00.000GMT", "duration": 0, "sparkUser": "spark",
			"completed": a.Completed, "appSparkVersion": "4.0.0",
			"startTimeEpoch": 1767225600000, "endTimeEpoch": endEpoch, "lastUpdatedEpoch": 1767225600000,
		}},
	}
}

// properties are the application's Spark properties, redacted as Utils.redact does: a value
// is replaced when the regex finds a match in its key or in the value itself.
// conformance: redaction
func (s *Server) properties(a App) [][]string {
	props := [][]string{
		{"spark.app.id", a.ID},
		{"spark.app.name", "stand-in"},
		{"spark.driver.port", "7078"},
	}
	if a.PodName != "" {
		props = append(props, []string{PodNameProperty, a.PodName})
	}
	if a.Namespace != "" {
		props = append(props, []string{NamespaceProperty, a.Namespace})
	}
	for _, kv := range props {
		if s.redact.MatchString(kv[0]) || s.redact.MatchString(kv[1]) {
			kv[1] = RedactionReplacement
		}
	}
	return props
}

// Spark's properties naming the driver Pod.
const (
	PodNameProperty   = "spark.kubernetes.driver.pod.name"
	NamespaceProperty = "spark.kubernetes.namespace"
)

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
