package redirect

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
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
	return fakeStore{NewTable(es)}
}

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
	if _, ok := FromService(service("no-uri", redirector, nil)); ok {
		t.Error("a handed-off Service without a history URI counts")
	}
	e, ok := FromService(handedOff("wc-ui-svc", "Spark.Example.COM", "/apps/wc/", "https://shs/history/a/"))
	if want := (Entry{Name: "wc-ui-svc", Host: "spark.example.com", Prefix: "/apps/wc", URI: "https://shs/history/a/"}); !ok || e != want {
		t.Errorf("entry %+v %v, want %+v", e, ok, want)
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

func TestHandler(t *testing.T) {
	h := Handler{Source: storeOf(
		handedOff("wc-ui-svc", "spark.example.com", "/apps/wc", "https://shs/history/wc/"),
		handedOff("wc2-ui-svc", "spark.example.com", "/apps/wc2", "https://shs/history/wc2/"),
		handedOff("deep-ui-svc", "", "/apps/wc/deep", "https://shs/history/deep/"),
		handedOff("other-host-ui-svc", "other.example.com", "/", "https://shs/history/other/"),
		service("live-ui-svc", map[string]string{"spark-app-selector": "live", "spark-role": "driver"},
			map[string]string{"sparkui.dev/route-prefix": "/apps/live", "sparkui.dev/history-uri": "https://shs/history/live/"}),
	)}
	for _, c := range []struct {
		name, host, path string
		hdr              map[string]string
		code             int
		location         string
	}{
		{"prefix itself", "spark.example.com", "/apps/wc", nil, 302, "https://shs/history/wc/"},
		{"under the prefix", "spark.example.com", "/apps/wc/jobs/", nil, 302, "https://shs/history/wc/"},
		{"host port and case ignored", "SPARK.example.com:8443", "/apps/wc2/stages/", nil, 302, "https://shs/history/wc2/"},
		{"not a segment prefix", "spark.example.com", "/apps/wcx", nil, 404, ""},
		{"longest prefix wins", "spark.example.com", "/apps/wc/deep/jobs", nil, 302, "https://shs/history/deep/"},
		{"any-host route", "elsewhere.example.com", "/apps/wc/deep", nil, 302, "https://shs/history/deep/"},
		{"host-bound route on another host", "elsewhere.example.com", "/apps/wc/jobs", nil, 404, ""},
		{"root prefix on its host", "other.example.com", "/jobs/", nil, 302, "https://shs/history/other/"},
		// The route stripped the prefix (URLRewrite to /) and said so in X-Forwarded-Context.
		{"X-Forwarded-Context", "spark.example.com", "/jobs/", map[string]string{"X-Forwarded-Context": "/apps/wc2"}, 302, "https://shs/history/wc2/"},
		{"X-Forwarded-Context trailing slash", "spark.example.com", "/", map[string]string{"X-Forwarded-Context": "/apps/wc/"}, 302, "https://shs/history/wc/"},
		{"a bound Service never redirects", "spark.example.com", "/apps/live/jobs", nil, 404, ""},
		{"nothing", "spark.example.com", "/", nil, 404, ""},
	} {
		resp := do(t, h, c.host, c.path, c.hdr)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.code || resp.Header.Get("Location") != c.location {
			t.Errorf("%s: %d Location %q, want %d %q (%s)", c.name, resp.StatusCode, resp.Header.Get("Location"), c.code, c.location, body)
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", c.name, resp.Header.Get("Cache-Control"))
		}
		if c.code == 404 && (resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || len(body) == 0 || len(body) > 200) {
			t.Errorf("%s: 404 %q body %q, want a short text/plain body", c.name, resp.Header.Get("Content-Type"), body)
		}
	}
}

// TestHandlerAmbiguous: two finished applications behind the same route and host: neither
// page is guessed.
func TestHandlerAmbiguous(t *testing.T) {
	h := Handler{Source: storeOf(handedOff("a-ui-svc", "", "/", "https://shs/history/a/"), handedOff("b-ui-svc", "", "", "https://shs/history/b/"))}
	resp := do(t, h, "x", "/jobs/", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || resp.Header.Get("Location") != "" || !bytes.Contains(body, []byte("a-ui-svc, b-ui-svc")) {
		t.Errorf("ambiguous: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
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
// bound again or deleted.
func TestApply(t *testing.T) {
	w := &Watcher{entries: map[string]Entry{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	names := func() []string {
		var out []string
		for _, e := range NewTable(func() []Entry {
			var es []Entry
			for _, e := range w.entries {
				es = append(es, e)
			}
			return es
		}()).entries {
			out = append(out, e.Name+"="+e.URI)
		}
		return out
	}
	steps := []struct {
		typ     string
		svc     *externaluri.Service
		changed bool
		want    []string
	}{
		{"ADDED", service("a", map[string]string{"spark-app-selector": "a"}, nil), false, nil},
		{"MODIFIED", handedOff("a", "", "/", "https://shs/history/a/"), true, []string{"a=https://shs/history/a/"}},
		{"MODIFIED", handedOff("a", "", "/", "https://shs/history/a/"), false, []string{"a=https://shs/history/a/"}},
		{"ADDED", handedOff("b", "", "/b", "https://shs/history/b/"), true, []string{"a=https://shs/history/a/", "b=https://shs/history/b/"}},
		{"MODIFIED", service("a", map[string]string{"spark-app-selector": "a2"}, map[string]string{"sparkui.dev/history-uri": "https://shs/history/a/"}), true, []string{"b=https://shs/history/b/"}},
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
}
