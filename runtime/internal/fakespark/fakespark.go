// Package fakespark is a stand-in Spark UI for tests: an HTTP(S) server answering the shapes
// of Spark's monitoring REST API, "Spark is starting up" HTML until it is made ready.
package fakespark

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// State is what the UI answers.
type State int

const (
	StartingUp State = iota // every path: 200 text/html "Spark is starting up"
	Ready                   // the REST API answers
	Denied                  // UI ACLs: 403 on everything
)

// Options describe the application behind the UI.
type Options struct {
	Addr    string // listen address; "" = 127.0.0.1:0
	TLS     bool
	AppID   string // id listed by /api/v1/applications (local-<millis> in driver-only mode)
	PodName string // spark.kubernetes.driver.pod.name in the environment
	// Namespace is spark.kubernetes.namespace in the environment; "" = not listed.
	Namespace string
	State     State // initial state
}

// Server is a running stand-in UI.
type Server struct {
	opts     Options
	srv      *httptest.Server
	state    atomic.Int32
	requests atomic.Int64
	mu       sync.Mutex
	byAgent  map[string]int64
	Port     int
	Addr     string // host:port it listens on
	once     sync.Once
}

// Start listens and serves.
func Start(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts}
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

// Requests is the number of HTTP requests served so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

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

// Close stops listening (the socket's inode disappears) and waits for requests in flight.
func (s *Server) Close() { s.once.Do(s.srv.Close) }

// StartingUpPage is what Spark serves on every path until the UI is ready.
const StartingUpPage = `<!DOCTYPE html><html><head><title>Starting up</title></head>` +
	`<body>Spark is starting up. Please wait a while until it's ready.</body></html>`

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	if s.byAgent == nil {
		s.byAgent = map[string]int64{}
	}
	s.byAgent[r.UserAgent()]++
	s.mu.Unlock()
	switch State(s.state.Load()) {
	case StartingUp:
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		_, _ = w.Write([]byte(StartingUpPage))
		return
	case Denied:
		http.Error(w, "user \"anonymous\" is not authorized", http.StatusForbidden)
		return
	}
	id := s.opts.AppID
	switch {
	case r.URL.Path == "/api/v1/applications" || r.URL.Path == "/api/v1/applications/":
		writeJSON(w, []any{map[string]any{
			"id":   id,
			"name": "stand-in",
			"attempts": []any{map[string]any{
				"startTime": "2026-01-01T00:00:00.000GMT", "endTime": "1969-12-31T23:59:59.999GMT",
				"lastUpdated": "2026-01-01T00:00:00.000GMT", "duration": 0, "sparkUser": "spark",
				"completed": false, "appSparkVersion": "4.0.0",
				"startTimeEpoch": 1767225600000, "endTimeEpoch": -1, "lastUpdatedEpoch": 1767225600000,
			}},
		}})
	case r.URL.Path == "/api/v1/applications/"+id+"/environment":
		writeJSON(w, map[string]any{
			"runtime":           map[string]any{"javaVersion": "17.0.12", "javaHome": "/opt/java/openjdk", "scalaVersion": "version 2.13.14"},
			"sparkProperties":   s.properties(id),
			"hadoopProperties":  [][]string{},
			"systemProperties":  [][]string{{"java.version", "17.0.12"}},
			"metricsProperties": [][]string{},
			"classpathEntries":  [][]string{{"/opt/spark/jars/spark-core_2.13-4.0.0.jar", "System Classpath"}},
			"resourceProfiles":  []any{},
		})
	case strings.HasPrefix(r.URL.Path, "/api/v1/"):
		w.Header().Set("Content-Type", "text/plain")
		http.Error(w, "unknown app", http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		_, _ = w.Write([]byte("<html><body>Spark Jobs</body></html>"))
	}
}

func (s *Server) properties(id string) [][]string {
	props := [][]string{
		{"spark.app.id", id},
		{"spark.app.name", "stand-in"},
		{"spark.driver.port", "7078"},
		{PodNameProperty, s.opts.PodName},
	}
	if s.opts.Namespace != "" {
		props = append(props, []string{"spark.kubernetes.namespace", s.opts.Namespace})
	}
	return props
}

// PodNameProperty is Spark's property naming the driver Pod.
const PodNameProperty = "spark.kubernetes.driver.pod.name"

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Redirector is the plain-HTTP connector of a TLS UI: it only redirects to the HTTPS port.
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
