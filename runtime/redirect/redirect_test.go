package redirect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/runtime/externaluri"
)

// service builds a UI Service's JSON as the API server would return it.
func service(name string, selector, ann map[string]string) *externaluri.Service {
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": name, "labels": map[string]string{"app.kubernetes.io/managed-by": "sparkui"}, "annotations": ann},
		"spec":     map[string]any{"selector": selector},
	})
	s, err := externaluri.Parse(b)
	if err != nil {
		panic(err)
	}
	return s
}

var redirector = map[string]string{"sparkui.dev/history-redirector": "true"}

func handedOff(name, host, prefix, uri string) *externaluri.Service {
	ann := map[string]string{"sparkui.dev/history-uri": uri}
	if host != "" {
		ann["sparkui.dev/route-host"] = host
	}
	if prefix != "" {
		ann["sparkui.dev/route-prefix"] = prefix
	}
	return service(name, redirector, ann)
}

// fakeStore is the informer's store in tests: the Services as listed.
type fakeStore struct{ t *Table }

func (f fakeStore) Table() *Table { return f.t }

func storeOf(svcs ...*externaluri.Service) fakeStore {
	var es []Entry
	for _, s := range svcs {
		if e, ok := FromService(s); ok {
			es = append(es, e)
		}
	}
	return fakeStore{NewTable("analytics", es)}
}

// shs is the redirector's own History Server URL in these tests.
const shs = "https://shs.example.com/spark"

func TestFromService(t *testing.T) {
	if _, ok := FromService(service("bound", map[string]string{"spark-app-selector": "a", "spark-role": "driver"},
		map[string]string{"sparkui.dev/history-uri": "https://shs/history/a/"})); ok {
		t.Error("a bound Service with a stale history URI counts")
	}
	if _, ok := FromService(service("withdrawn", map[string]string{"sparkui.dev/withdrawn": "u"}, map[string]string{"sparkui.dev/history-uri": "https://shs/history/a/"})); ok {
		t.Error("a withdrawn Service counts")
	}
	if _, ok := FromService(service("mixed", map[string]string{"sparkui.dev/history-redirector": "true", "spark-role": "driver"},
		map[string]string{"sparkui.dev/history-uri": "https://shs/history/a/"})); ok {
		t.Error("a selector beyond the redirector's counts")
	}
	if e, ok := FromService(service("no-uri", redirector, nil)); !ok || !strings.Contains(e.Refused, "no sparkui.dev/history-uri annotation") {
		t.Errorf("a handed-off Service without a history URI: %+v %v, want refused", e, ok)
	}
	e, ok := FromService(handedOff("wc-ui-svc", "Spark.Example.COM", "/apps/wc/", "https://shs/history/spark-0123abc/"))
	if want := (Entry{Name: "wc-ui-svc", Host: "spark.example.com", Prefix: "/apps/wc", AppID: "spark-0123abc"}); !ok || e != want {
		t.Errorf("entry %+v %v, want %+v", e, ok, want)
	}
}

// TestAppIDFromHistoryURI: only <http(s) URL>/history/<id>/ with an id of letters, digits,
// '-' and '_' gives an id; anything else a driver could write is refused with a reason.
func TestAppIDFromHistoryURI(t *testing.T) {
	for uri, want := range map[string]string{
		"https://shs.example.com/history/spark-0123456789abcdef0123456789abcdef/": "spark-0123456789abcdef0123456789abcdef",
		"http://shs:18080/history/local-1733000000000/":                           "local-1733000000000",
		"https://shs.example.com/a/b/history/application_1700000000000_0042/":     "application_1700000000000_0042",
		// Another base is not refused: it is not used (the redirect goes to the redirector's URL).
		"https://evil.example/history/app-20261202-0001/": "app-20261202-0001",
	} {
		if got, err := AppIDFromHistoryURI(uri); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", uri, got, err, want)
		}
	}
	for uri, reason := range map[string]string{
		"javascript:alert(1)":                                   "not an absolute http(s) URL",
		"//evil.example/history/a/":                             "not an absolute http(s) URL",
		"/history/a/":                                           "not an absolute http(s) URL",
		"https://evil.example/phish":                            "is not …/history/<app id>/",
		"https://shs/history/a":                                 "is not …/history/<app id>/",
		"https://shs/history/":                                  "is not …/history/<app id>/",
		"https://shs/history//":                                 "no application id",
		"https://shs/history/a%2F..%2Fevil/":                    "has characters other than",
		"https://shs/history/a.b/":                              "has characters other than",
		"https://shs/history/%E2%80%AEspark/":                   "has characters other than",
		"https://shs/xhistory/a/":                               "is not …/history/<app id>/",
		"https://shs/history/" + strings.Repeat("a", 254) + "/": "application id of 254 characters",
		"https://[::1/history/a/":                               "not a URL",
	} {
		if got, err := AppIDFromHistoryURI(uri); err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("%q: %q %v, want an error saying %q", uri, got, err, reason)
		}
	}
}

func do(t *testing.T, h http.Handler, host, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

type handlerCase struct {
	name, host, path string
	hdr              map[string]string
	code             int
	location         string
}

func checkCases(t *testing.T, h http.Handler, cases []handlerCase) {
	t.Helper()
	for _, c := range cases {
		resp := do(t, h, c.host, c.path, c.hdr)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.code || resp.Header.Get("Location") != c.location {
			t.Errorf("%s: %d Location %q, want %d %q (%s)", c.name, resp.StatusCode, resp.Header.Get("Location"), c.code, c.location, body)
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", c.name, resp.Header.Get("Cache-Control"))
		}
		if c.code == 404 && (resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || len(body) == 0 || len(body) > 300) {
			t.Errorf("%s: 404 %q body %q, want a short text/plain body", c.name, resp.Header.Get("Content-Type"), body)
		}
	}
}

func TestHandler(t *testing.T) {
	h := Handler{HistoryURL: shs, Source: storeOf(
		handedOff("wc-ui-svc", "spark.example.com", "/apps/wc", "https://shs/history/wc/"),
		handedOff("wc2-ui-svc", "spark.example.com", "/apps/wc2", "https://shs/history/wc2/"),
		handedOff("other-host-ui-svc", "other.example.com", "/", "https://shs/history/other/"),
		handedOff("any-host-ui-svc", "", "/apps/any", "https://shs/history/any/"),
		service("live-ui-svc", map[string]string{"spark-app-selector": "live", "spark-role": "driver"},
			map[string]string{"sparkui.dev/route-prefix": "/apps/live", "sparkui.dev/history-uri": "https://shs/history/live/"}),
	)}
	checkCases(t, h, []handlerCase{
		// The route names its Service: that Service, whatever the host and path.
		{"route header", "spark.example.com", "/jobs/", map[string]string{"X-Sparkui-Service": "wc2-ui-svc"}, 302, shs + "/history/wc2/"},
		{"route header, any host", "elsewhere", "/", map[string]string{"X-Sparkui-Service": "other-host-ui-svc"}, 302, shs + "/history/other/"},
		{"route header, bound Service", "spark.example.com", "/apps/wc/jobs/", map[string]string{"X-Sparkui-Service": "live-ui-svc"}, 404, ""},
		{"route header, unknown Service", "spark.example.com", "/apps/wc/jobs/", map[string]string{"X-Sparkui-Service": "nope"}, 404, ""},
		{"route header, not a name", "spark.example.com", "/apps/wc/jobs/", map[string]string{"X-Sparkui-Service": "../x"}, 400, ""},
		// No header: the Service's own DNS name.
		{"service DNS name", "wc-ui-svc.analytics.svc.cluster.local:4040", "/jobs/", nil, 302, shs + "/history/wc/"},
		{"service short name", "wc2-ui-svc", "/", nil, 302, shs + "/history/wc2/"},
		{"service name, other namespace", "wc-ui-svc.other.svc", "/", nil, 404, ""},
		// No header: the one route claim that matches.
		{"prefix itself", "spark.example.com", "/apps/wc", nil, 302, shs + "/history/wc/"},
		{"under the prefix", "spark.example.com", "/apps/wc/jobs/", nil, 302, shs + "/history/wc/"},
		{"host port and case ignored", "SPARK.example.com:8443", "/apps/wc2/stages/", nil, 302, shs + "/history/wc2/"},
		{"not a segment prefix", "spark.example.com", "/apps/wcx", nil, 404, ""},
		{"any-host claim", "elsewhere.example.com", "/apps/any/x", nil, 302, shs + "/history/any/"},
		{"host-bound claim on another host", "elsewhere.example.com", "/apps/wc/jobs", nil, 404, ""},
		{"root prefix on its host", "other.example.com", "/jobs/", nil, 302, shs + "/history/other/"},
		{"X-Forwarded-Context", "spark.example.com", "/jobs/", map[string]string{"X-Forwarded-Context": "/apps/wc2"}, 302, shs + "/history/wc2/"},
		{"X-Forwarded-Context trailing slash", "spark.example.com", "/", map[string]string{"X-Forwarded-Context": "/apps/wc/"}, 302, shs + "/history/wc/"},
		{"a bound Service never redirects", "spark.example.com", "/apps/live/jobs", nil, 404, ""},
		{"nothing", "spark.example.com", "/", nil, 404, ""},
	})
}

// victim is the application under attack in the tests below; its route on spark.example.com
// under /apps/victim names victim-ui-svc in X-Sparkui-Service.
func victim() *externaluri.Service {
	return handedOff("victim-ui-svc", "spark.example.com", "/apps/victim", "https://shs.example.com/spark/history/spark-victim/")
}

var viaVictimRoute = map[string]string{"X-Sparkui-Service": "victim-ui-svc", "X-Forwarded-Context": "/apps/victim"}

// TestHostileLongerPrefix: a second application's driver writes a longer prefix under the
// victim's host and an evil URI on its own Service. The victim's requests through its route
// still get the victim's page on the redirector's own URL; without the route's header the
// overlap is refused, never resolved for the longer claim.
func TestHostileLongerPrefix(t *testing.T) {
	h := Handler{HistoryURL: shs, Source: storeOf(victim(),
		handedOff("hostile-ui-svc", "spark.example.com", "/apps/victim/jobs", "https://evil.example/history/spark-hostile/"))}
	checkCases(t, h, []handlerCase{
		{"through the victim's route", "spark.example.com", "/job/?id=1", viaVictimRoute, 302, shs + "/history/spark-victim/"},
		{"through the victim's route, the hostile path", "spark.example.com", "/jobs/job/", viaVictimRoute, 302, shs + "/history/spark-victim/"},
		{"no header, overlapping claims", "spark.example.com", "/apps/victim/jobs/job/", nil, 404, ""},
		{"no header, only the victim's claim", "spark.example.com", "/apps/victim/stages/", nil, 302, shs + "/history/spark-victim/"},
		// The hostile Service's own route: its own id, on the redirector's URL, never evil.example.
		{"through the hostile route", "spark.example.com", "/", map[string]string{"X-Sparkui-Service": "hostile-ui-svc"}, 302, shs + "/history/spark-hostile/"},
	})
}

// TestHostileURIs: a history URI that is not <url>/history/<valid id>/ is refused: no
// redirect at all, and never the annotation's text as Location.
func TestHostileURIs(t *testing.T) {
	for _, uri := range []string{"javascript:alert(1)", "//evil.example/phish", "https://evil.example/phish", "https://shs/history/a%2F..%2F..%2Fevil/",
		"https://shs/history/a\r\nSet-Cookie:x/", "data:text/html,<script>alert(1)</script>"} {
		h := Handler{HistoryURL: shs, Source: storeOf(handedOff("hostile-ui-svc", "", "/", uri))}
		for _, hdr := range []map[string]string{{"X-Sparkui-Service": "hostile-ui-svc"}, nil} {
			resp := do(t, h, "spark.example.com", "/", hdr)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 404 || resp.Header.Get("Location") != "" || bytes.Contains(body, []byte("evil")) {
				t.Errorf("%q (header %v): %d Location %q body %q, want a 404 without the URI", uri, hdr, resp.StatusCode, resp.Header.Get("Location"), body)
			}
		}
	}
	// Whatever base the annotation names, the Location is the redirector's.
	h := Handler{HistoryURL: shs + "/", Source: storeOf(handedOff("a-ui-svc", "", "/", "https://evil.example/history/spark-a/"))}
	if resp := do(t, h, "x", "/", map[string]string{"X-Sparkui-Service": "a-ui-svc"}); resp.Header.Get("Location") != shs+"/history/spark-a/" {
		t.Errorf("Location %q, want %q", resp.Header.Get("Location"), shs+"/history/spark-a/")
	}
}

// TestHostileCopy: an exact copy of the victim's host and prefix cannot take or deny the
// victim's requests through its route; a request without the header is refused, naming both.
func TestHostileCopy(t *testing.T) {
	h := Handler{HistoryURL: shs, Source: storeOf(victim(), handedOff("copy-ui-svc", "spark.example.com", "/apps/victim", "https://shs/history/spark-copy/"),
		handedOff("any-ui-svc", "", "/", "https://shs/history/spark-any/"))}
	checkCases(t, h, []handlerCase{
		{"through the victim's route", "spark.example.com", "/", viaVictimRoute, 302, shs + "/history/spark-victim/"},
		{"victim's own DNS name", "victim-ui-svc.analytics.svc", "/", nil, 302, shs + "/history/spark-victim/"},
		{"a claim cannot take another's DNS name", "copy-ui-svc.analytics", "/", nil, 302, shs + "/history/spark-copy/"},
	})
	resp := do(t, h, "spark.example.com", "/apps/victim/jobs/", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !bytes.Contains(body, []byte("any-ui-svc, copy-ui-svc, victim-ui-svc")) {
		t.Errorf("no header: %d %s, want a 404 naming the three claims", resp.StatusCode, body)
	}
	if got := h.Source.Table().Overlaps(); fmt.Sprint(got) != "[any-ui-svc and copy-ui-svc any-ui-svc and victim-ui-svc copy-ui-svc and victim-ui-svc]" {
		t.Errorf("overlaps %q", got)
	}
}

// TestBodyNotRead: a request with a body is answered without reading it, and the connection
// is closed after the answer.
func TestBodyNotRead(t *testing.T) {
	h := Handler{HistoryURL: shs, Source: storeOf(victim())}
	req := httptest.NewRequest(http.MethodPost, "http://spark.example.com/", strings.NewReader("x=1"))
	req.Header.Set("X-Sparkui-Service", "victim-ui-svc")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 302 || rec.Header().Get("Connection") != "close" {
		t.Errorf("POST: %d Connection %q", rec.Code, rec.Header().Get("Connection"))
	}
}

func TestNotSynced(t *testing.T) {
	resp := do(t, Handler{Source: fakeStore{}}, "x", "/", nil)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("before the first list: %d", resp.StatusCode)
	}
	hh := Health{Source: fakeStore{}}
	if resp := do(t, hh, "x", ReadyPath, nil); resp.StatusCode != 503 {
		t.Errorf("readyz before the first list: %d", resp.StatusCode)
	}
	if resp := do(t, hh, "x", LivePath, nil); resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
	hh = Health{Source: storeOf(handedOff("a-ui-svc", "", "/", "https://shs/history/a/"))}
	if resp := do(t, hh, "x", ReadyPath, nil); resp.StatusCode != 200 {
		t.Errorf("readyz after the list: %d", resp.StatusCode)
	}
	if resp := do(t, hh, "x", "/jobs/", nil); resp.StatusCode != 404 {
		t.Errorf("health port, other path: %d", resp.StatusCode)
	}
}

// TestApply: watch events keep the table: added when handed off, changed, dropped when
// bound again or deleted; a refused claim is kept as refused.
func TestApply(t *testing.T) {
	var logs bytes.Buffer
	w := &Watcher{namespace: "analytics", entries: map[string]Entry{}, log: slog.New(slog.NewTextHandler(&logs, nil))}
	names := func() []string {
		var out []string
		for _, e := range w.entries {
			out = append(out, e.Name+"="+e.AppID+e.Refused)
		}
		sort.Strings(out)
		return out
	}
	steps := []struct {
		typ     string
		svc     *externaluri.Service
		changed bool
		want    []string
	}{
		{"ADDED", service("a", map[string]string{"spark-app-selector": "a"}, nil), false, nil},
		{"MODIFIED", handedOff("a", "", "/", "https://shs/history/a/"), true, []string{"a=a"}},
		{"MODIFIED", handedOff("a", "", "/", "https://shs/history/a/"), false, []string{"a=a"}},
		{"ADDED", handedOff("b", "", "/b", "https://shs/history/b/"), true, []string{"a=a", "b=b"}},
		{"MODIFIED", handedOff("b", "", "/b", "javascript:alert(1)"), true, []string{"a=a", "b=its sparkui.dev/history-uri annotation (19 characters) not an absolute http(s) URL"}},
		{"MODIFIED", handedOff("b", "", "/b", "javascript:alert(1)"), false, []string{"a=a", "b=its sparkui.dev/history-uri annotation (19 characters) not an absolute http(s) URL"}},
		{"MODIFIED", service("a", map[string]string{"spark-app-selector": "a2"}, map[string]string{"sparkui.dev/history-uri": "https://shs/history/a/"}), true, []string{"b=its sparkui.dev/history-uri annotation (19 characters) not an absolute http(s) URL"}},
		{"DELETED", handedOff("b", "", "/b", "https://shs/history/b/"), true, nil},
	}
	for i, s := range steps {
		if got := w.apply(s.typ, s.svc); got != s.changed {
			t.Errorf("step %d: changed %v, want %v", i, got, s.changed)
		}
		if got := names(); !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d: table %v, want %v", i, got, s.want)
		}
	}
	// The refusal is logged once, naming the Service and why.
	if n := strings.Count(logs.String(), "refusing the hand-off of a UI Service"); n != 1 || !strings.Contains(logs.String(), `service=b reason="its sparkui.dev/history-uri annotation (19 characters) not an absolute http(s) URL"`) {
		t.Errorf("%d refusal lines:\n%s", n, logs.String())
	}
}
