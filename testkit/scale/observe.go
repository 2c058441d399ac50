package scale

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// observer watches the namespace's Services and EndpointSlices and notes, per UI Service,
// when the API server first showed it bound to its application and when withdrawn, and every
// change of its EndpointSlices.
type observer struct {
	mu        sync.Mutex
	bound     map[string]time.Time      // UI Service → first seen bound
	withdrawn map[string]time.Time      // UI Service → first seen withdrawn
	sliceEvts map[string]int            // UI Service → EndpointSlice events (added, modified, deleted)
	slices    map[string]map[string]int // UI Service → slice name → ready endpoints now
	appOf     map[string]string         // UI Service → application id
	peak      map[string]int            // UI Service → most ready endpoints seen at once
	endpoint  map[string]time.Time      // UI Service → first seen with a ready endpoint
}

func newObserver(apps []App) *observer {
	o := &observer{bound: map[string]time.Time{}, withdrawn: map[string]time.Time{}, sliceEvts: map[string]int{},
		slices: map[string]map[string]int{}, appOf: map[string]string{}, peak: map[string]int{}, endpoint: map[string]time.Time{}}
	for _, a := range apps {
		o.appOf[a.UIService()] = a.AppID
	}
	return o
}

// run keeps an informer on the namespace's Services and one on its EndpointSlices until ctx
// ends (client-go's Reflector lists again and resumes when a watch closes, which a loaded API
// server does), and closes synced once both have listed.
func (o *observer) run(ctx context.Context, cs kubernetes.Interface, ns string, synced chan<- struct{}) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	svc := f.Core().V1().Services().Informer()
	_, _ = svc.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.service(obj) },
		UpdateFunc: func(_, obj any) { o.service(obj) },
	})
	sl := f.Discovery().V1().EndpointSlices().Informer()
	_, _ = sl.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.slice(watch.Added, obj) },
		UpdateFunc: func(_, obj any) { o.slice(watch.Modified, obj) },
		DeleteFunc: func(obj any) { o.slice(watch.Deleted, obj) },
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	close(synced)
	<-ctx.Done()
	f.Shutdown()
}

func (o *observer) service(obj any) {
	s, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	app, ok := o.appOf[s.Name]
	if !ok {
		return
	}
	if _, seen := o.bound[s.Name]; !seen && s.Spec.Selector[names.LabelAppSelector] == app {
		o.bound[s.Name] = now
	}
	if _, seen := o.withdrawn[s.Name]; !seen && s.Spec.Selector[names.WithdrawnSelectorKey] != "" {
		o.withdrawn[s.Name] = now
	}
}

func (o *observer) slice(t watch.EventType, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return
	}
	svc := s.Labels[discoveryv1.LabelServiceName]
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.appOf[svc]; !ok {
		return
	}
	o.sliceEvts[svc]++
	if o.slices[svc] == nil {
		o.slices[svc] = map[string]int{}
	}
	if t == watch.Deleted {
		delete(o.slices[svc], s.Name)
		return
	}
	ready := 0
	for _, ep := range s.Endpoints {
		if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
			ready += len(ep.Addresses)
		}
	}
	o.slices[svc][s.Name] = ready
	total := 0
	for _, r := range o.slices[svc] {
		total += r
	}
	o.peak[svc] = max(o.peak[svc], total)
	if _, seen := o.endpoint[svc]; !seen && total > 0 {
		o.endpoint[svc] = time.Now()
	}
}

// endpointAt is when the UI Service's EndpointSlices first held a ready endpoint.
func (o *observer) endpointAt(svc string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.endpoint[svc]
}

// endpoints is the number of ready endpoints the UI Service's slices hold now.
func (o *observer) endpoints(svc string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, r := range o.slices[svc] {
		n += r
	}
	return n
}

func (o *observer) times(svc string) (bound, withdrawn time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bound[svc], o.withdrawn[svc]
}

// Requests counts one identity's requests: "verb resource" and "verb resource code" → count.
type Requests map[string]int

// lateAnswer: a patch the server answered this long after receiving it may have been answered
// after the runtime's request timeout (5 s, runtime/agent config.go RequestTimeout), which
// counts from the runtime's send: the request also waited, on a loaded machine, before the
// server received it, so half the timeout, not all of it.
const lateAnswer = 5 * time.Second / 2

// auditRequests reads the audit log: the requests of each application's ServiceAccount, and
// how many patches of its Service it may not have heard the outcome of (unanswered): a 504
// (the server gave up waiting, the write may still land) or an answer that may have come after
// the runtime's request timeout. Each may have been applied, and the runtime, which cannot know, sends it
// again.
func auditRequests(path, ns string, apps []App) (reqs map[string]Requests, unanswered map[string]int, err error) {
	bySA := map[string]Requests{}
	lost := map[string]int{}
	for _, a := range apps {
		bySA["system:serviceaccount:"+ns+":"+a.ServiceAccount] = Requests{}
	}
	err = testcluster.ReadAudit(path, func(ev testcluster.AuditEvent) {
		r, ok := bySA[ev.Username]
		if !ok {
			return
		}
		res := ev.Resource
		if ev.Subresource != "" {
			res += "/" + ev.Subresource
		}
		if res == "" {
			res = "(none)"
		}
		r[ev.Verb+" "+res]++
		r[fmt.Sprintf("%s %s %d", ev.Verb, res, ev.Code)]++
		if ev.Verb == "patch" && res == "services" && (ev.Code == 504 || ev.Code/100 == 2 && ev.Completed.Sub(ev.Received) >= lateAnswer) {
			lost[ev.Username]++
		}
	})
	if err != nil {
		return nil, nil, err
	}
	reqs, unanswered = map[string]Requests{}, map[string]int{}
	for _, a := range apps {
		sa := "system:serviceaccount:" + ns + ":" + a.ServiceAccount
		reqs[a.AppID], unanswered[a.AppID] = bySA[sa], lost[sa]
	}
	return reqs, unanswered, nil
}

// isCount reports whether k is a "verb resource" key (not one with a code).
func isCount(k string) bool { return strings.Count(k, " ") == 1 }
