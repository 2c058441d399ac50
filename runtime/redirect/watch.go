package redirect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// Selector is the label selector of the Services the redirector follows: sparkui's.
var Selector = names.LabelManagedBy + "=" + names.ManagedByValue

// Watcher keeps the table of a namespace's handed-off UI Services with one list and then a
// watch (resumed from the last resourceVersion; listed again when the API server says the
// version is too old). It decodes Services from JSON into the few fields it reads and
// registers no API types, like the rest of the runtime.
type Watcher struct {
	rc        rest.Interface
	namespace string
	log       *slog.Logger
	// ListTimeout bounds the list request; WatchTimeout is how long one watch request lasts
	// before it is renewed (the API server ends it then).
	ListTimeout, WatchTimeout time.Duration
	Backoff                   wait.Backoff

	table   atomic.Pointer[Table]
	entries map[string]Entry // owned by Run
	// overlaps is what the log last said about overlapping route claims (owned by Run).
	overlaps string
}

// NewWatcher follows namespace's Services through the API server of cfg.
func NewWatcher(cfg *rest.Config, namespace string, log *slog.Logger) (*Watcher, error) {
	c := externaluri.CoreV1Config(cfg)
	c.Timeout = 0 // a watch lasts minutes: each request has its own bound instead
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Watcher{rc: rc, namespace: namespace, log: log, ListTimeout: 30 * time.Second, WatchTimeout: 5 * time.Minute,
		Backoff: wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 10 * time.Second}}, nil
}

// Table is the current snapshot, nil until the first list succeeded.
func (w *Watcher) Table() *Table { return w.table.Load() }

// errExpired: the watch's resourceVersion is too old (410): list again.
var errExpired = errors.New("resourceVersion expired")

// Run lists and watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	b := w.Backoff
	rv := ""
	for ctx.Err() == nil {
		var err error
		if rv == "" {
			rv, err = w.list(ctx)
		}
		if err == nil {
			rv, err = w.watch(ctx, rv)
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errExpired):
			w.log.Info("watch expired; listing again")
			rv = ""
			continue
		case err != nil:
			d := b.Step()
			w.log.Warn("listing or watching the UI Services failed", "namespace", w.namespace, "err", err, "retry_in", d.Round(time.Millisecond))
			if err := sleep(ctx, d); err != nil {
				return
			}
			continue
		}
		b = w.Backoff // the watch ended normally: renew it at once
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (w *Watcher) request() *rest.Request {
	return w.rc.Get().Namespace(w.namespace).Resource("services").Param("labelSelector", Selector)
}

// list reads every UI Service and replaces the table; it returns the list's resourceVersion.
func (w *Watcher) list(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, w.ListTimeout)
	defer cancel()
	res := w.request().Do(lctx)
	raw, err := res.Raw()
	if err != nil {
		return "", res.Error()
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []externaluri.Service `json:"items"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return "", fmt.Errorf("reading the Service list: %w", err)
	}
	old := w.entries
	w.entries = map[string]Entry{}
	for i := range l.Items {
		if e, ok := FromService(&l.Items[i]); ok {
			w.entries[e.Name] = e
			if o, had := old[e.Name]; !had || o != e {
				w.logEntry(e)
			}
		}
	}
	w.publish()
	w.log.Info("listed the UI Services", "namespace", w.namespace, "handed_off", len(w.entries), "resource_version", l.Metadata.ResourceVersion)
	return l.Metadata.ResourceVersion, nil
}

func (w *Watcher) publish() {
	es := make([]Entry, 0, len(w.entries))
	for _, e := range w.entries {
		es = append(es, e)
	}
	t := NewTable(w.namespace, es)
	defer w.table.Store(t)
	// Said once per change, not per request: which claims a request without the route's
	// header could match together, and so is refused.
	if o := strings.Join(t.Overlaps(), "; "); o != w.overlaps {
		w.overlaps = o
		if o != "" {
			w.log.Warn("overlapping route claims: a request without the "+names.HeaderUIService+" header (an Ingress, an older route) that matches more than one of them is refused",
				"namespace", w.namespace, "services", o)
		} else {
			w.log.Info("no overlapping route claims any more", "namespace", w.namespace)
		}
	}
}

// logEntry says what the redirector makes of a handed-off Service, once per change.
func (w *Watcher) logEntry(e Entry) {
	if e.Refused != "" {
		w.log.Warn("refusing the hand-off of a UI Service: it will not be redirected", "namespace", w.namespace, "service", e.Name, "reason", e.Refused)
		return
	}
	w.log.Info("handed-off UI Service", "namespace", w.namespace, "service", e.Name, "app_id", e.AppID, "route_host", e.Host, "route_prefix", e.Prefix)
}

// event is one watch event as the API server streams it in JSON.
type event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watch follows changes from rv until the API server ends the request, and returns the
// resourceVersion to resume from.
func (w *Watcher) watch(ctx context.Context, rv string) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, w.WatchTimeout+30*time.Second)
	defer cancel()
	body, err := w.request().
		Param("watch", "true").
		Param("resourceVersion", rv).
		Param("allowWatchBookmarks", "true").
		Param("timeoutSeconds", fmt.Sprint(int(w.WatchTimeout.Seconds()))).
		Stream(wctx)
	if err != nil {
		return rv, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return rv, nil
			}
			return rv, err
		}
		switch ev.Type {
		case "ERROR":
			var st metav1.Status
			_ = json.Unmarshal(ev.Object, &st)
			if st.Code == http.StatusGone {
				return "", errExpired
			}
			return rv, fmt.Errorf("watch error %d: %s", st.Code, st.Message)
		case "ADDED", "MODIFIED", "DELETED", "BOOKMARK":
			svc, err := externaluri.Parse(ev.Object)
			if err != nil {
				return rv, err
			}
			if svc.Metadata.ResourceVersion != "" {
				rv = svc.Metadata.ResourceVersion
			}
			if ev.Type != "BOOKMARK" && w.apply(ev.Type, svc) {
				w.publish()
			}
		}
	}
}

// apply records one change; it reports whether the table changed.
func (w *Watcher) apply(typ string, svc *externaluri.Service) bool {
	name := svc.Metadata.Name
	old, had := w.entries[name]
	e, ok := FromService(svc)
	if typ == "DELETED" {
		ok = false
	}
	switch {
	case ok && (!had || old != e):
		w.entries[name] = e
		w.logEntry(e)
		return true
	case !ok && had:
		delete(w.entries, name)
		w.log.Info("UI Service no longer handed off", "service", name, "event", typ)
		return true
	}
	return false
}
