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
//     its login page).
package fakespark

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
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
	// Completed marks the attempt completed (a finished application).
	Completed bool
	// History makes it a History Server listing these applications (AppID etc. unused).
	History []App
	State   State // initial state
	// RedactionRegex is spark.redaction.regex; "" = Spark's default.
	RedactionRegex string
	Filter         Filter
	Token          string    // the bearer token JWS accepts
	Header         [2]string // the header (name, value) SPNEGO and SSO accept
	// ProxyBase is spark.ui.proxyBase ("" = not set); ProxyRedirectURI spark.ui.proxyRedirectUri.
	ProxyBase, ProxyRedirectURI string
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
	s.state.Store(int32(opts.State))
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	_ = s.srv.Listener.Close()
	s.srv.Listener = ln
	if opts.TLS {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	s.Addr = ln.Addr().String()
	s.Port = ln.Addr().(*net.TCPAddr).Port
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
func (s *Server) Close() { s.once.Do(s.srv.Close) }

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
	// Filters run before every handler (JettyUtils adds them to each context), the
	// starting-up page included.
	if !s.filter(w, r) {
		return
	}
	state := State(s.state.Load())
	switch state {
	case StartingUp:
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		_, _ = w.Write([]byte(StartingUpPage))
		return
	case Attaching:
		w.Header().Set("Content-Type", "text/html;charset=iso-8859-1")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(jetty404))
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
	switch r.URL.Path {
	case "/": // SparkUI.initialize: createRedirectHandler("/", "/jobs/")
		s.redirect(w, r, "/jobs/")
		return
	case "/jobs", "/stages", "/storage", "/environment", "/executors", "/static":
		// Jetty's redirect of a context root without its trailing slash.
		s.redirect(w, r, r.URL.Path+"/")
		return
	}
	if !uiPage(r.URL.Path) {
		// No context serves it (a path under the proxy base among them): Jetty's 404.
		w.Header().Set("Content-Type", "text/html;charset=iso-8859-1")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(jetty404))
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
func (s *Server) uiRoot(r *http.Request) string {
	if s.opts.ProxyBase != "" {
		return s.opts.ProxyBase
	}
	return r.Header.Get("X-Forwarded-Context")
}

// redirect is Jetty's sendRedirect of path resolved against the request URL, or, with
// spark.ui.proxyRedirectUri, ProxyRedirectHandler's <proxyRedirectUri><uiRoot><path>.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, path string) {
	loc := "http://" + r.Host + path
	if r.TLS != nil {
		loc = "https://" + r.Host + path
	}
	if s.opts.ProxyRedirectURI != "" {
		loc = strings.TrimSuffix(s.opts.ProxyRedirectURI, "/") + s.uiRoot(r) + path
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
}

// filter answers like the configured filter; false when it refused the request.
func (s *Server) filter(w http.ResponseWriter, r *http.Request) bool {
	switch s.opts.Filter {
	case JWS: // ui/JWSFilter.scala
		w.Header().Set("Cache-Control", "no-cache, no-store, must-revalidate")
		h := r.Header.Get("Authorization")
		switch tok, ok := strings.CutPrefix(h, "Bearer "); {
		case h == "":
			http.Error(w, "Authorization header is missing.", http.StatusForbidden)
		case !ok:
			http.Error(w, "Malformed Authorization header.", http.StatusForbidden)
		case tok != s.opts.Token:
			http.Error(w, "JWT Validate Fail", http.StatusForbidden)
		default:
			return true
		}
		return false
	case SPNEGO:
		if r.Header.Get(s.opts.Header[0]) == s.opts.Header[1] {
			return true
		}
		w.Header().Set("WWW-Authenticate", "Negotiate")
		http.Error(w, "Authentication required", http.StatusUnauthorized)
		return false
	case SSO:
		if r.Header.Get(s.opts.Header[0]) == s.opts.Header[1] {
			return true
		}
		http.Redirect(w, r, "https://sso.example.com/login?next="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return false
	}
	return true
}

func (s *Server) apps() []App {
	if len(s.opts.History) > 0 {
		return s.opts.History
	}
	return []App{{ID: s.opts.AppID, Completed: s.opts.Completed, PodName: s.opts.PodName, Namespace: s.opts.Namespace}}
}

// listed is an ApplicationInfo as the REST API writes it.
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

// Redirector is the plain-HTTP connector of a TLS UI: it only redirects (302, Jetty's
// sendRedirect) to the same path on the HTTPS port (JettyUtils.createRedirectHttpsHandler).
type Redirector struct {
	srv  *httptest.Server
	Port int
}

// StartRedirector listens on addr ("" = 127.0.0.1:0) and redirects everything to httpsPort.
func StartRedirector(addr string, httpsPort int) (*Redirector, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		u := *r.URL
		u.Scheme, u.Host = "https", net.JoinHostPort(host, strconv.Itoa(httpsPort))
		http.Redirect(w, r, u.String(), http.StatusFound)
	}))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return &Redirector{srv: srv, Port: ln.Addr().(*net.TCPAddr).Port}, nil
}

// Close stops it.
func (r *Redirector) Close() { r.srv.Close() }
