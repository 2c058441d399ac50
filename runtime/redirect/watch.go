package redirect

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// Selector is the label selector of the Services the redirector follows: sparkui's.
var Selector = names.LabelManagedBy + "=" + names.ManagedByValue

// Watcher keeps the table of a namespace's handed-off UI Services through client-go's
// Reflector (tools/cache): one list, then watches resumed from the last resourceVersion
// (bookmarks included), a new list when the API server says the version is too old (410),
// backoff between failures. Its ListerWatcher decodes Services from JSON into the few fields
// the redirector reads and registers no API types, like the rest of the runtime: the
// Reflector over it costs the binary 0.32 MB, where an informer over the typed clientset
// cost 15.8 MB (docs/design-choices.md).
type Watcher struct {
	rc        rest.Interface
	namespace string
	log       *slog.Logger
	// ListTimeout bounds the list request; WatchTimeout is how long one watch request lasts
	// at least before it is renewed (the Reflector asks for between it and twice it, and the
	// API server ends the request then).
	ListTimeout, WatchTimeout time.Duration
	Backoff                   wait.Backoff
	// Coalesce is how long a change waits for others before the table is rebuilt (0: at
	// once). Rebuilding costs about 10 ms at 10,000 Services (BenchmarkChurn), so a burst of
	// events (a namespace's finished applications deleted together) costs one rebuild per
	// period instead of one per event; a redirect lags the watch by at most this long.
	Coalesce time.Duration

	table atomic.Pointer[Table]
	mu    sync.Mutex // guards what follows: the Reflector's goroutine and the rebuild timer
	// entries are the handed-off Services by name.
	entries map[string]Entry
	// overlaps is what the log last said about overlapping route claims.
	overlaps string
	// pending: a rebuild is scheduled.
	pending bool
	// rebuilds counts the tables built.
	rebuilds int
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
		Backoff:  wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 10 * time.Second},
		Coalesce: 250 * time.Millisecond}, nil
}

// Table is the current snapshot, nil until the first list succeeded.
func (w *Watcher) Table() *Table { return w.table.Load() }

// Run lists and watches until ctx ends. The Reflector logs through the Watcher's logger.
func (w *Watcher) Run(ctx context.Context) {
	logger := logr.FromSlogHandler(w.log.Handler())
	ctx = klog.NewContext(ctx, logger)
	b := w.Backoff
	r := cache.NewReflectorWithOptions(listWatch{w}, &object{}, store{w}, cache.ReflectorOptions{
		Name: "ui-services", TypeDescription: "UI Services", Logger: &logger,
		MinWatchTimeout: w.WatchTimeout, Backoff: &b,
	})
	r.RunWithContext(ctx)
}

func (w *Watcher) request() *rest.Request {
	return w.rc.Get().Namespace(w.namespace).Resource("services").Param("labelSelector", Selector)
}

// replace is a list: every UI Service, replacing the table at once.
func (w *Watcher) replace(objs []any, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.entries
	w.entries = map[string]Entry{}
	for _, o := range objs {
		if o := o.(*object); o.handedOff {
			e := o.entry
			w.entries[e.Name] = e
			if o, had := old[e.Name]; !had || o != e {
				w.logEntry(e)
			}
		}
	}
	w.publish()
	w.log.Info("listed the UI Services", "namespace", w.namespace, "handed_off", len(w.entries), "resource_version", rv)
}

// changed is one watch event: the table is rebuilt once the Coalesce period after the first
// change not yet published has passed.
func (w *Watcher) changed(typ string, o *object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.applyEntry(typ, o.Name, o.entry, o.handedOff) {
		return
	}
	if w.Coalesce <= 0 {
		w.publish()
		return
	}
	if !w.pending {
		w.pending = true
		time.AfterFunc(w.Coalesce, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.pending = false
			w.publish()
		})
	}
}

// publish rebuilds the table from the entries; w.mu is held.
func (w *Watcher) publish() {
	es := make([]Entry, 0, len(w.entries))
	for _, e := range w.entries {
		es = append(es, e)
	}
	t := NewTable(w.namespace, es)
	w.rebuilds++
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

// apply records one change; it reports whether the table changed.
func (w *Watcher) apply(typ string, svc *externaluri.Service) bool {
	e, ok := FromService(svc)
	return w.applyEntry(typ, svc.Metadata.Name, e, ok)
}

// applyEntry records the change of the Service name, whose entry is e when ok (handed off).
func (w *Watcher) applyEntry(typ, name string, e Entry, ok bool) bool {
	old, had := w.entries[name]
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
