package redirect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/runtime/externaluri"
)

// fakeAPI serves a Service list and then scripted watch streams, as the API server does in
// JSON: one list (with the label selector), then watches from the list's resourceVersion.
type fakeAPI struct {
	mu      sync.Mutex
	lists   int
	watches []string // resourceVersion of each watch request
	list    func(n int) string
	stream  func(n int, rv string) []string // events of watch n (newline-delimited JSON)
	open    int                             // from this watch on the stream stays open
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/namespaces/analytics/services" || r.URL.Query().Get("labelSelector") != "app.kubernetes.io/managed-by=sparkui" {
		http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") != "true" {
		f.lists++
		n := f.lists
		f.mu.Unlock()
		_, _ = io.WriteString(w, f.list(n))
		return
	}
	rv := r.URL.Query().Get("resourceVersion")
	f.watches = append(f.watches, rv)
	n := len(f.watches)
	f.mu.Unlock()
	for _, ev := range f.stream(n, rv) {
		_, _ = io.WriteString(w, ev+"\n")
		w.(http.Flusher).Flush()
	}
	if n >= f.open {
		<-r.Context().Done()
	}
}

func svcJSON(name, rv string, handedOff bool) string {
	sel := map[string]string{"spark-app-selector": name}
	if handedOff {
		sel = map[string]string{"sparkui.dev/history-redirector": "true"}
	}
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": name, "resourceVersion": rv, "annotations": map[string]string{"sparkui.dev/history-uri": "https://shs/history/" + name + "/"}},
		"spec":     map[string]any{"selector": sel},
	})
	return string(b)
}

func ev(typ, obj string) string { return fmt.Sprintf(`{"type":%q,"object":%s}`, typ, obj) }

// TestWatcher: list, then watch from its resourceVersion; a watch that ends is resumed from
// the last version seen (bookmarks included); 410 Gone makes it list again.
func TestWatcher(t *testing.T) {
	api := &fakeAPI{
		list: func(n int) string {
			if n == 1 {
				return `{"metadata":{"resourceVersion":"10"},"items":[` + svcJSON("a", "9", true) + `,` + svcJSON("b", "8", false) + `]}`
			}
			return `{"metadata":{"resourceVersion":"30"},"items":[` + svcJSON("c", "29", true) + `]}`
		},
		stream: func(n int, rv string) []string {
			switch n {
			case 1: // then the API server ends the request
				return []string{ev("MODIFIED", svcJSON("b", "11", true)), ev("BOOKMARK", `{"metadata":{"resourceVersion":"15"}}`)}
			case 2:
				return []string{ev("ERROR", `{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"}`)}
			}
			return []string{ev("DELETED", svcJSON("c", "31", true))}
		},
		open: 3,
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	w, err := NewWatcher(&rest.Config{Host: srv.URL}, "analytics", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	w.Backoff.Duration = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		api.mu.Lock()
		nw := len(api.watches)
		api.mu.Unlock()
		if tb := w.Table(); nw >= 3 && tb != nil && tb.Len() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watches %v, table %+v", api.watches, w.Table())
		}
		time.Sleep(10 * time.Millisecond)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if api.lists != 2 || fmt.Sprint(api.watches) != "[10 15 30]" {
		t.Errorf("lists %d, watches from %v; want 2 lists, watches from [10 15 30]", api.lists, api.watches)
	}
}

// TestWatcherTable: what the table holds after the list and a watch event.
func TestWatcherTable(t *testing.T) {
	api := &fakeAPI{
		list: func(int) string {
			return `{"metadata":{"resourceVersion":"10"},"items":[` + svcJSON("a", "9", true) + `,` + svcJSON("b", "8", false) + `]}`
		},
		stream: func(n int, _ string) []string {
			if n == 1 {
				return []string{ev("MODIFIED", svcJSON("b", "11", true))}
			}
			return nil
		},
		open: 1,
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	var logs syncBuffer
	w, err := NewWatcher(&rest.Config{Host: srv.URL}, "analytics", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for w.Table() == nil || w.Table().Len() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("table %+v", w.Table())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// a (listed) and b (handed off by the watch), both claiming any host at "/": refused
	// without the route's header, each found by its own.
	if r, ok := w.Table().ByHost("x", "/", ""); ok || fmt.Sprint(r.Ambiguous) != "[a b]" {
		t.Errorf("after the list and the event: %+v %v", r, ok)
	}
	if r, ok := w.Table().ByService("b"); !ok || r.Entry.AppID != "b" {
		t.Errorf("b by its header: %+v %v", r, ok)
	}
	// Said once, when the overlap appeared.
	if n := strings.Count(logs.String(), "overlapping route claims"); n != 1 || !strings.Contains(logs.String(), `services="a and b"`) {
		t.Errorf("%d overlap lines:\n%s", n, logs.String())
	}
}

// syncBuffer is a log buffer the watcher's goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCoalesce: a burst of 2,000 watch events (finished applications' Services handed off, or
// deleted together) is published as a few rebuilt tables, not 2,000; the table holds
// every change once the period has passed.
func TestCoalesce(t *testing.T) {
	w := &Watcher{namespace: "analytics", entries: map[string]Entry{}, log: quietLog(), Coalesce: 50 * time.Millisecond}
	svcs := make([]*externaluri.Service, 2000)
	for i := range svcs {
		raw, _ := json.Marshal(scaleService(i, routed, i))
		var err error
		if svcs[i], err = externaluri.Parse(raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, svc := range svcs {
		w.changed("ADDED", newObject(svc))
	}
	deadline := time.Now().Add(10 * time.Second)
	for w.Table() == nil || w.Table().Len() != 2000 {
		if time.Now().After(deadline) {
			t.Fatalf("table %v after the burst", w.Table())
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// One per 50 ms period the burst spans: a few, on a loaded machine.
	if w.rebuilds > 10 {
		t.Errorf("%d tables built for a burst of 2,000 events", w.rebuilds)
	}
}
