package fakespark

import (
	"net/http"
	"strings"
)

// historyPage answers a History Server's non-API paths as Spark's does, true when it did.
// HistoryServer.initialize (core/src/main/scala/org/apache/spark/deploy/history/
// HistoryServer.scala, Spark 3.5 and 4.0 alike) attaches HistoryPage first, a WebUIPage with
// prefix "": WebUI.attachPage maps it through JettyUtils.createServletHandler at context "/"
// with the servlet at "/", the default mapping, so "/" and every path no other context serves
// answer 200 with the application list ("History Server" page). A live UI's root context is
// createRedirectHandler("/", "/jobs/") instead (ui/SparkUI.scala initialize): a 302. That is
// how the runtime tells the two apart when a History Server lists one in-progress application.
// /api and /static are their own contexts; /history/<id> is the loader servlet (not modelled:
// 404 here as for an application it cannot load).
// conformance: history-server
func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) bool {
	if len(s.opts.History) == 0 || strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/static/") {
		return false
	}
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	if strings.HasPrefix(r.URL.Path, "/history/") {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><title>Not Found</title></head><body>Application not found.</body></html>`))
		return true
	}
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>History Server</title></head><body><h3>History Server</h3><ul>`)
	for _, a := range s.opts.History {
		b.WriteString(`<li><a href="` + s.uiRoot(r) + `/history/` + a.ID + `/jobs/">` + a.ID + `</a></li>`)
	}
	b.WriteString(`</ul></body></html>`)
	_, _ = w.Write([]byte(b.String()))
	return true
}
