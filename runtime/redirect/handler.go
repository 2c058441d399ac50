package redirect

import (
	"fmt"
	"net/http"
	"strings"
)

// Source is where the handler reads the current table: the watch, or a test's fake store.
type Source interface {
	// Table is the current snapshot; nil until the first list succeeded.
	Table() *Table
}

// Handler answers every request on the redirect port: 302 to the History Server page of
// the handed-off Service the request belongs to, else 404. It serves no health path: the
// redirect port is what handed-off Services route users' requests to, whatever their path,
// so any path there could be one of Spark's; health is on its own port (Health).
type Handler struct {
	Source Source
}

func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A redirect must not be cached: the same route leads to the next run's live UI as soon
	// as a driver binds the Service again.
	w.Header().Set("Cache-Control", "no-store")
	t := h.Source.Table()
	if t == nil {
		plain(w, http.StatusServiceUnavailable, "sparkui history redirector: not synced with the API server yet\n")
		return
	}
	res, ok := t.Lookup(r.Host, r.URL.Path, r.Header.Get("X-Forwarded-Context"))
	switch {
	case ok:
		w.Header().Set("Location", res.Entry.URI)
		w.WriteHeader(http.StatusFound)
	case len(res.Ambiguous) > 0:
		plain(w, http.StatusNotFound, fmt.Sprintf("sparkui history redirector: this route matches several finished applications (Services %s); not redirecting\n",
			strings.Join(res.Ambiguous, ", ")))
	default:
		plain(w, http.StatusNotFound, "sparkui history redirector: no finished application is routed here\n")
	}
}

func plain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// HealthPaths of the health port.
const (
	LivePath  = "/healthz" // the process serves
	ReadyPath = "/readyz"  // the first list succeeded
)

// Health serves LivePath and ReadyPath on the health port.
type Health struct {
	Source Source
}

func (h Health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case LivePath:
		plain(w, http.StatusOK, "ok\n")
	case ReadyPath:
		t := h.Source.Table()
		if t == nil {
			plain(w, http.StatusServiceUnavailable, "not synced with the API server yet\n")
			return
		}
		plain(w, http.StatusOK, fmt.Sprintf("ok: %d handed-off Services\n", t.Len()))
	default:
		plain(w, http.StatusNotFound, "not found\n")
	}
}
