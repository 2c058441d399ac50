package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/names"
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
}

func newObserver(apps []App) *observer {
	o := &observer{bound: map[string]time.Time{}, withdrawn: map[string]time.Time{}, sliceEvts: map[string]int{},
		slices: map[string]map[string]int{}, appOf: map[string]string{}, peak: map[string]int{}}
	for _, a := range apps {
		o.appOf[a.UIService()] = a.AppID
	}
	return o
}

// run watches until ctx ends. A watch that closes is opened again from the last version seen.
func (o *observer) run(ctx context.Context, cs kubernetes.Interface, ns string, started chan<- struct{}) {
	svcW, err := cs.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		close(started)
		return
	}
	sliceW, err := cs.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		svcW.Stop()
		close(started)
		return
	}
	close(started)
	go o.loop(ctx, svcW, func(e watch.Event) {
		if s, ok := e.Object.(*corev1.Service); ok {
			o.service(s)
		}
	})
	o.loop(ctx, sliceW, func(e watch.Event) {
		if s, ok := e.Object.(*discoveryv1.EndpointSlice); ok {
			o.slice(e.Type, s)
		}
	})
}

func (o *observer) loop(ctx context.Context, w watch.Interface, f func(watch.Event)) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.ResultChan():
			if !ok {
				return
			}
			f(e)
		}
	}
}

func (o *observer) service(s *corev1.Service) {
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

func (o *observer) slice(t watch.EventType, s *discoveryv1.EndpointSlice) {
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

// auditRequests reads the audit log: the requests of each application's ServiceAccount.
func auditRequests(path, ns string, apps []App) (map[string]Requests, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bySA := map[string]Requests{}
	for _, a := range apps {
		bySA["system:serviceaccount:"+ns+":"+a.ServiceAccount] = Requests{}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource, Subresource string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		r, ok := bySA[ev.User.Username]
		if !ok {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		if res == "" {
			res = "(none)"
		}
		r[ev.Verb+" "+res]++
		r[fmt.Sprintf("%s %s %d", ev.Verb, res, ev.ResponseStatus.Code)]++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := map[string]Requests{}
	for _, a := range apps {
		out[a.AppID] = bySA["system:serviceaccount:"+ns+":"+a.ServiceAccount]
	}
	return out, nil
}

// isCount reports whether k is a "verb resource" key (not one with a code).
func isCount(k string) bool { return strings.Count(k, " ") == 1 }
