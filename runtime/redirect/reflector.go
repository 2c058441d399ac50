package redirect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkui/sparkui/runtime/externaluri"
)

// What the Watcher gives client-go's Reflector: a ListerWatcher over the REST client that
// decodes JSON itself (no scheme, no typed client), the objects it carries and the store
// that turns the Reflector's calls into the table.

// object is one Service as the Reflector carries it: what the redirector reads of it, and the
// name and resourceVersion the Reflector reads through metav1.Object.
type object struct {
	metav1.ObjectMeta
	svc *externaluri.Service
}

func (o *object) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (o *object) DeepCopyObject() runtime.Object   { c := *o; return &c }

func newObject(svc *externaluri.Service) *object {
	m := svc.Metadata
	return &object{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion,
		Annotations: m.Annotations}, svc: svc}
}

// list is a Service list: the items, and the resourceVersion and continue token the
// Reflector's pager reads.
type list struct {
	metav1.ListMeta
	Items []object
}

func (l *list) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (l *list) DeepCopyObject() runtime.Object   { c := *l; return &c }

type listWatch struct{ w *Watcher }

var _ cache.ListerWatcherWithContext = listWatch{}

// IsWatchListSemanticsUnSupported keeps the Reflector on one list and then watches
// (client-go util/watchlist.DoesClientNotSupportWatchListSemantics): a streaming list would be
// a watch with sendInitialEvents, which this decoder is not written for, and the redirector's
// requests stay those TestRedirectorBinary counts in the audit log.
func (listWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (lw listWatch) List(o metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), o)
}

func (lw listWatch) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), o)
}

func (lw listWatch) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	ctx, cancel := context.WithTimeout(ctx, lw.w.ListTimeout)
	defer cancel()
	req := lw.w.request()
	if o.ResourceVersion != "" {
		req = req.Param("resourceVersion", o.ResourceVersion)
	}
	if o.Limit > 0 {
		req = req.Param("limit", fmt.Sprint(o.Limit))
	}
	if o.Continue != "" {
		req = req.Param("continue", o.Continue)
	}
	res := req.Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		return nil, res.Error()
	}
	var l struct {
		Metadata metav1.ListMeta       `json:"metadata"`
		Items    []externaluri.Service `json:"items"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("reading the Service list: %w", err)
	}
	out := &list{ListMeta: l.Metadata, Items: make([]object, len(l.Items))}
	for i := range l.Items {
		out.Items[i] = *newObject(&l.Items[i])
	}
	return out, nil
}

func (lw listWatch) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	timeout := lw.w.WatchTimeout
	if o.TimeoutSeconds != nil {
		timeout = time.Duration(*o.TimeoutSeconds) * time.Second
	}
	// The API server ends the request after timeoutSeconds; this bounds one that never does.
	ctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	body, err := lw.w.request().
		Param("watch", "true").
		Param("resourceVersion", o.ResourceVersion).
		Param("allowWatchBookmarks", fmt.Sprint(o.AllowWatchBookmarks)).
		Param("timeoutSeconds", fmt.Sprint(int(timeout.Seconds()))).
		Stream(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	return watch.NewStreamWatcher(&decoder{dec: json.NewDecoder(body), body: body, cancel: cancel},
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// decoder reads the watch events the API server streams in JSON.
type decoder struct {
	dec    *json.Decoder
	body   io.Closer
	cancel context.CancelFunc
}

func (d *decoder) Decode() (watch.EventType, runtime.Object, error) {
	var ev struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := d.dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	if ev.Type == watch.Error {
		// A Status: the Reflector lists again on 410 Gone, and backs off on anything else.
		var st metav1.Status
		if err := json.Unmarshal(ev.Object, &st); err != nil {
			return "", nil, fmt.Errorf("reading a watch error: %w", err)
		}
		return ev.Type, &st, nil
	}
	svc, err := externaluri.Parse(ev.Object)
	if err != nil {
		return "", nil, err
	}
	return ev.Type, newObject(svc), nil
}

func (d *decoder) Close() {
	d.cancel()
	_ = d.body.Close()
}

// store is the Reflector's store: the table, rebuilt on each list and changed by each event.
// The Reflector calls it from one goroutine.
type store struct{ w *Watcher }

func (s store) Add(o any) error    { s.change("ADDED", o); return nil }
func (s store) Update(o any) error { s.change("MODIFIED", o); return nil }
func (s store) Delete(o any) error { s.change("DELETED", o); return nil }
func (s store) Resync() error      { return nil }

func (s store) Replace(objs []any, rv string) error {
	s.w.replace(objs, rv)
	return nil
}

func (s store) change(typ string, o any) {
	if s.w.apply(typ, o.(*object).svc) {
		s.w.publish()
	}
}
