// Package redirect is the History Server redirector (`sparkui-runtime redirect`, one per
// namespace): it follows the namespace's UI Services handed off to it (docs/history.md) with
// one list and watch, and answers a request with a 302 to the History Server page of the
// Service whose route the request came through. It makes no API request per HTTP request.
//
// Files: table.go (which Service a request belongs to), handler.go (the HTTP side), watch.go
// (the list and watch).
package redirect

import (
	"net"
	"sort"
	"strings"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// Entry is one handed-off UI Service as the redirector matches it.
type Entry struct {
	Name   string
	Host   string // sparkui.dev/route-host, lower case; "" = any host
	Prefix string // sparkui.dev/route-prefix without a trailing slash; "" = "/"
	URI    string // sparkui.dev/history-uri
}

// FromService is svc's entry, and false when svc does not count: only a Service whose
// selector is exactly the redirector's (the runtime handed it off) and that carries a History
// Server page. A Service bound to a driver, withdrawn, or selecting the redirector's Pods
// together with others is never redirected.
func FromService(svc *externaluri.Service) (Entry, bool) {
	sel := svc.Spec.Selector
	if len(sel) != 1 || sel[names.LabelHistoryRedirector] != names.HistoryRedirectorValue {
		return Entry{}, false
	}
	ann := svc.Metadata.Annotations
	uri := ann[names.AnnotationHistoryURI]
	if uri == "" {
		return Entry{}, false
	}
	return Entry{Name: svc.Metadata.Name, Host: strings.ToLower(ann[names.AnnotationRouteHost]), Prefix: trimSlash(ann[names.AnnotationRoutePrefix]), URI: uri}, true
}

// trimSlash drops trailing slashes: "/" and "" both become "" (the root).
func trimSlash(p string) string { return strings.TrimRight(p, "/") }

// Table is a snapshot of the entries, never changed once built.
type Table struct{ entries []Entry }

// NewTable builds a Table (sorted by name, for stable answers and logs).
func NewTable(entries []Entry) *Table {
	es := append([]Entry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	return &Table{entries: es}
}

// Len is the number of handed-off Services.
func (t *Table) Len() int { return len(t.entries) }

// Result is what Lookup found.
type Result struct {
	Entry Entry
	// Ambiguous names the Services that matched equally well; the request is then not
	// redirected (sending it to one application's page at random could mislead).
	Ambiguous []string
}

// Lookup finds the entry a request belongs to (docs/history.md): its route-host, when
// set, equals the request's host (port ignored, case-insensitive), and its route-prefix
// equals the X-Forwarded-Context header (which the route sets when it strips the prefix) or
// is a path-segment prefix of the request path. The longest prefix wins; at equal length a
// Service whose route names the host wins over one that matches any host; a tie beyond that
// is ambiguous. ok is false when nothing matches or the best match is ambiguous.
func (t *Table) Lookup(host, path, forwardedContext string) (Result, bool) {
	host = strings.ToLower(hostOnly(host))
	fwd := trimSlash(forwardedContext)
	var best []Entry
	bestScore := -1
	for _, e := range t.entries {
		if e.Host != "" && e.Host != host {
			continue
		}
		if !(forwardedContext != "" && fwd == e.Prefix) && !segmentPrefix(e.Prefix, path) {
			continue
		}
		score := 2 * len(e.Prefix)
		if e.Host != "" {
			score++
		}
		switch {
		case score > bestScore:
			best, bestScore = []Entry{e}, score
		case score == bestScore:
			best = append(best, e)
		}
	}
	switch len(best) {
	case 0:
		return Result{}, false
	case 1:
		return Result{Entry: best[0]}, true
	}
	var ns []string
	for _, e := range best {
		ns = append(ns, e.Name)
	}
	return Result{Ambiguous: ns}, false
}

// segmentPrefix: prefix (no trailing slash; "" the root) is path itself or a whole-segment
// prefix of it: /a/b matches /a/b, /a/b/ and /a/b/c, not /a/bc.
func segmentPrefix(prefix, path string) bool {
	if prefix == "" {
		return true
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && (rest == "" || rest[0] == '/')
}

// hostOnly drops the port of a Host header (IPv6 brackets too).
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}
