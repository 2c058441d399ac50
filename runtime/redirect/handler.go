package redirect

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// Source is where the handler reads the current table: the watch, or a test's fake store.
type Source interface {
	// Table is the current snapshot; nil until the first list succeeded.
	Table() *Table
}

// Handler answers every request on the redirect port: 302 to the History Server page of the
// handed-off Service the request came through, else 404. It serves no health path: the
// redirect port is what handed-off Services route users' requests to, whatever their path,
// so any path there could be one of Spark's; health is on its own port (Health).
type Handler struct {
	Source Source
	// HistoryURL is the redirector's own History Server URL (checked with
	// sidecar.CheckHistoryURL): every redirect is <HistoryURL>/history/<app id>/.
	HistoryURL string
}

func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A redirect must not be cached: the same route leads to the next run's live UI as soon
	// as a driver binds the Service again.
	w.Header().Set("Cache-Control", "no-store")
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		// No answer here needs a body: answer without reading it and close the connection.
		// net/http would still drain up to 256 KiB of a body of unknown length after the
		// answer (its body.Close); a read deadline already passed ends that at once, so a
		// slowly sent body holds no connection.
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	t := h.Source.Table()
	if t == nil {
		plain(w, http.StatusServiceUnavailable, "sparkui history redirector: not synced with the API server yet\n")
		return
	}
	var res Result
	var ok bool
	if vs, named := r.Header[http.CanonicalHeaderKey(names.HeaderUIService)]; named {
		// Set by the application's route, replacing whatever the client sent: this Service
		// and no other.
		if len(vs) != 1 || len(validation.IsDNS1035Label(vs[0])) > 0 {
			plain(w, http.StatusBadRequest, "sparkui history redirector: "+names.HeaderUIService+" must be one Service name\n")
			return
		}
		res, ok = t.ByService(vs[0])
	} else {
		res, ok = t.ByHost(r.Host, r.URL.Path, r.Header.Get(names.HeaderForwardedContext))
	}
	if !ok {
		msg := res.Missing
		if len(res.Ambiguous) > 0 {
			more := ""
			if res.AmbiguousMore > 0 {
				more = fmt.Sprintf(" and %d more", res.AmbiguousMore)
			}
			msg += " (Services " + strings.Join(res.Ambiguous, ", ") + more + ")"
		}
		plain(w, http.StatusNotFound, "sparkui history redirector: "+msg+"; not redirecting\n")
		return
	}
	w.Header().Set("Location", sidecar.HistoryURI(h.HistoryURL, res.Entry.AppID))
	w.WriteHeader(http.StatusFound)
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
