// Package redirect is the History Server redirector (`sparkui-runtime redirect`, one per
// namespace): it follows the namespace's UI Services handed off to it (docs/history.md) with
// one list and watch, and answers a request with a 302 to the History Server page of the
// Service the request came through. It makes no API request per HTTP request.
//
// Everything it reads on a Service is a claim of that application's code (its driver's
// ServiceAccount may patch the Service), so a Service only ever chooses WHICH application id
// the redirect names, never where it leads: the target is the redirector's own History Server
// URL, and a request is answered from the one Service its route names.
//
// Files: table.go (which Service a request belongs to), handler.go (the HTTP side), watch.go
// (the list and watch).
package redirect

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// Entry is one handed-off UI Service as the redirector matches it.
type Entry struct {
	Name   string
	Host   string // sparkui.dev/route-host, lower case; "" = any host
	Prefix string // sparkui.dev/route-prefix without a trailing slash; "" = "/"
	// AppID is the Spark application id parsed from sparkui.dev/history-uri and checked.
	AppID string
	// Refused says why the Service's claim is not followed ("" when it is): it is never
	// redirected, and it takes no part in matching.
	Refused string
}

// maxAppIDLen bounds an application id: Spark's are far shorter (spark-<32 hex>,
// app-<timestamp>-<n>, application_<ts>_<n>, local-<ms>).
const maxAppIDLen = 253

// appIDPattern is what the redirector accepts as an application id. Spark's ids: on
// Kubernetes spark-<32 hex> (KubernetesConf.getKubernetesAppId), in local mode local-<millis>
// (LocalSchedulerBackend), standalone app-<date>-<n> (Master.newApplicationId), YARN
// application_<ts>_<n>: letters, digits, '-' and '_', none of which needs escaping in a path.
var appIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// CheckAppID accepts an application id the redirect may name.
func CheckAppID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("no application id")
	case len(id) > maxAppIDLen:
		return fmt.Errorf("application id of %d characters (at most %d)", len(id), maxAppIDLen)
	case !appIDPattern.MatchString(id):
		return fmt.Errorf("application id %q has characters other than letters, digits, '-' and '_'", id)
	}
	return nil
}

// AppIDFromHistoryURI is the application id of a history-uri annotation as the runtime's
// hand-off writes it, <url>/history/<app id>/ (sidecar.HistoryURI). The base it names is not
// used: the redirect goes to the redirector's own URL.
func AppIDFromHistoryURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("not an absolute http(s) URL")
	}
	rest, ok := strings.CutSuffix(u.EscapedPath(), "/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || i < 0 || !strings.HasSuffix(rest[:i], sidecar.HistoryPathPrefix) {
		return "", fmt.Errorf("its path is not …%s/<app id>/", sidecar.HistoryPathPrefix)
	}
	id := rest[i+1:]
	if err := CheckAppID(id); err != nil {
		return "", err
	}
	return id, nil
}

// FromService is svc's entry, and false when svc is not handed off: only a Service whose
// selector is exactly the redirector's counts. A Service bound to a driver, withdrawn, or
// selecting the redirector's Pods together with others is never redirected. A handed-off
// Service whose history URI does not give a valid application id is an entry with Refused set.
func FromService(svc *externaluri.Service) (Entry, bool) {
	sel := svc.Spec.Selector
	if len(sel) != 1 || sel[names.LabelHistoryRedirector] != names.HistoryRedirectorValue {
		return Entry{}, false
	}
	ann := svc.Metadata.Annotations
	e := Entry{Name: svc.Metadata.Name, Host: strings.ToLower(ann[names.AnnotationRouteHost]), Prefix: trimSlash(ann[names.AnnotationRoutePrefix])}
	uri, has := ann[names.AnnotationHistoryURI]
	if !has {
		e.Refused = "it has no " + names.AnnotationHistoryURI + " annotation"
		return e, true
	}
	id, err := AppIDFromHistoryURI(uri)
	if err != nil {
		e.Refused = fmt.Sprintf("its %s annotation (%d characters) %v", names.AnnotationHistoryURI, len(uri), err)
		return e, true
	}
	e.AppID = id
	return e, true
}

// trimSlash drops trailing slashes: "/" and "" both become "" (the root).
func trimSlash(p string) string { return strings.TrimRight(p, "/") }

// Table is a snapshot of the entries, never changed once built.
type Table struct {
	namespace string
	entries   []Entry // by name
	byName    map[string]int
	claims    claimIndex
}

// NewTable builds the Table of namespace's entries (sorted by name, for stable answers and logs).
func NewTable(namespace string, entries []Entry) *Table {
	es := append([]Entry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	t := &Table{namespace: namespace, entries: es, byName: make(map[string]int, len(es))}
	for i, e := range es {
		t.byName[e.Name] = i
	}
	t.claims = newClaimIndex(es)
	return t
}

// maxAmbiguous is how many Services a refused ambiguous request names.
const maxAmbiguous = 10

// Len is the number of handed-off Services (refused ones included).
func (t *Table) Len() int { return len(t.entries) }

// Result is what a lookup found.
type Result struct {
	Entry Entry
	// By says how the Service was chosen: "header", "service-host" or "route-claim".
	By string
	// Ambiguous names the Services whose route claims all match a request that names no
	// Service; the request is then not redirected.
	Ambiguous []string
	// AmbiguousMore counts the matching Services beyond the first maxAmbiguous named: a
	// namespace of Services without routes matches every header-less request thousands of
	// times, and the 404 names only a few.
	AmbiguousMore int
	// Missing explains a 404 in a few words for the response body.
	Missing string
}

// ByService is the entry of the Service a route named in the X-Sparkui-Service header.
func (t *Table) ByService(name string) (Result, bool) {
	i, ok := t.byName[name]
	switch {
	case !ok:
		return Result{Missing: fmt.Sprintf("the UI Service %q is not handed off to this redirector", name)}, false
	case t.entries[i].Refused != "":
		return Result{Missing: fmt.Sprintf("the hand-off of the UI Service %q was refused (the redirector's log says why)", name)}, false
	}
	return Result{Entry: t.entries[i], By: "header"}, true
}

// ByHost finds the entry of a request that names no Service (an Ingress, which cannot set a
// request header portably, or a client of the Service itself):
//
//  1. a Host that is a Service's own DNS name (<svc>, <svc>.<ns>, <svc>.<ns>.svc[.<domain>]):
//     that Service, which no other application can claim;
//  2. else the route claims (sparkui.dev/route-host and route-prefix, written by the function
//     but writable by each driver on its own Service): the request's Host equals the claimed
//     host (or the claim names none) and the claimed prefix equals X-Forwarded-Context or is a
//     path-segment prefix of the path. Exactly one accepted claim must match: two or more —
//     an exact copy, a longer prefix under the same host, a claim for any host — are
//     refused, never resolved by specificity, so a claim can deny but never take another
//     application's requests.
func (t *Table) ByHost(host, path, forwardedContext string) (Result, bool) {
	host = strings.TrimSuffix(strings.ToLower(hostOnly(host)), ".")
	if name, ok := t.serviceHost(host); ok {
		if r, ok := t.ByService(name); ok {
			r.By = "service-host"
			return r, true
		} else if _, handed := t.byName[name]; handed {
			return r, false
		}
	}
	match := t.claims.matching(host, path, trimSlash(forwardedContext), forwardedContext != "")
	switch len(match) {
	case 0:
		return Result{Missing: "no finished application is routed here"}, false
	case 1:
		return Result{Entry: t.entries[match[0]], By: "route-claim"}, true
	}
	r := Result{Missing: "this request matches the route claims of several finished applications"}
	for _, i := range match[:min(len(match), maxAmbiguous)] {
		r.Ambiguous = append(r.Ambiguous, t.entries[i].Name)
	}
	r.AmbiguousMore = len(match) - len(r.Ambiguous)
	return r, false
}

// serviceHost is the Service name of a host that is an in-cluster DNS name of a Service of
// this namespace (Kubernetes DNS: <svc>.<ns>.svc.<cluster domain>; search paths make <svc> and
// <svc>.<ns> work in the Pod's namespace and cluster).
func (t *Table) serviceHost(host string) (string, bool) {
	svc, rest, _ := strings.Cut(host, ".")
	if _, ok := t.byName[svc]; !ok {
		return "", false
	}
	if rest == "" || rest == t.namespace || rest == t.namespace+".svc" || strings.HasPrefix(rest, t.namespace+".svc.") {
		return svc, true
	}
	return "", false
}

// hostOnly drops the port of a Host header (IPv6 brackets too).
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}
