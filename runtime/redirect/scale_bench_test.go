package redirect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/runtime/externaluri"
)

// The History redirector at the size issue 33 names: 10,000 handed-off UI Services in one
// namespace, 10 applications ending each second. docs/performance.md ("The History redirector
// at 10,000 Services") takes its figures from these:
//
//	make bench-redirect
//
// (six runs of `go test -run '^$' -bench . -benchmem ./runtime/redirect`, read with benchstat).

const scaleN = 10_000

// routing is how a namespace's applications are reached.
type routing string

const (
	// routed: each under its own prefix of one gateway host, as the function's HTTPRoute and
	// Ingress write them (route-host spark.example.com, route-prefix /spark/<ns>/<app>).
	routed routing = "routed"
	// unrouted: no route claims (no route configured): reached through the Service's DNS name
	// or a route that names the Service. Every such Service claims every header-less request,
	// so all 10,000 overlap one another.
	unrouted routing = "unrouted"
)

func scaleName(i int) string  { return fmt.Sprintf("app%05d-sparkui-ui-svc", i) }
func scaleAppID(i int) string { return fmt.Sprintf("spark-%032x", i) }

// scaleService is a handed-off UI Service as the API server lists it: the function's labels and
// route annotations, the runtime's status annotations and hand-off (selector and history URI),
// a dual-stack ClusterIP, and the managedFields of its three writers (the GitOps apply, the
// runtime's bind and its hand-off), which the API server sends with every object.
func scaleService(i int, r routing, rv int) corev1.Service {
	name := scaleName(i)
	ann := map[string]string{
		"sparkui.dev/history-uri": "https://spark-history.example.com/history/" + scaleAppID(i) + "/",
		"sparkui.dev/ui-state":    "handed-off",
		"sparkui.dev/ui-since":    "2026-12-06T03:00:00Z",
		"sparkui.dev/ui-pod":      fmt.Sprintf("app%05d-driver", i),
		"sparkui.dev/ui-port":     "4040",
		"sparkui.dev/ui-reason":   "the driver Pod ended; the History Server has the application",
	}
	if r == routed {
		ann["sparkui.dev/route-host"] = "spark.example.com"
		ann["sparkui.dev/route-prefix"] = "/spark/analytics/" + fmt.Sprintf("app%05d", i)
	}
	fields := metav1.NewFieldsV1
	at := metav1.NewTime(time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC))
	return corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "analytics", UID: types.UID(fmt.Sprintf("0f6c2a8e-1b7d-4c1e-9a57-%012x", i)),
			ResourceVersion: fmt.Sprint(rv), CreationTimestamp: at,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "sparkui", "sparkui.dev/application": fmt.Sprintf("app%05d", i)},
			Annotations: ann,
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &at, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:annotations":{"f:sparkui.dev/route-host":{},"f:sparkui.dev/route-prefix":{}},"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:sparkui.dev/application":{}}},"f:spec":{"f:ipFamilyPolicy":{},"f:ports":{"k:{\"port\":4040,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:type":{}}}`)},
				{Manager: "sparkui-runtime", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:annotations":{"f:sparkui.dev/history-uri":{},"f:sparkui.dev/ui-pod":{},"f:sparkui.dev/ui-port":{},"f:sparkui.dev/ui-reason":{},"f:sparkui.dev/ui-since":{},"f:sparkui.dev/ui-state":{}}},"f:spec":{"f:ports":{"k:{\"port\":4040,\"protocol\":\"TCP\"}":{"f:targetPort":{}}},"f:selector":{}}}`)},
			},
		},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: fmt.Sprintf("10.96.%d.%d", i/250, 1+i%250),
			ClusterIPs:      []string{fmt.Sprintf("10.96.%d.%d", i/250, 1+i%250)},
			IPFamilies:      []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:  ptr(corev1.IPFamilyPolicyPreferDualStack),
			Ports:           []corev1.ServicePort{{Name: "spark-ui", Protocol: corev1.ProtocolTCP, Port: 4040, TargetPort: intstr.FromInt32(18080)}},
			Selector:        map[string]string{"sparkui.dev/history-redirector": "true"},
			SessionAffinity: corev1.ServiceAffinityNone, InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
		},
	}
}

func ptr[T any](v T) *T { return &v }

// scaleList is the namespace's Service list in JSON, as the API server answers the redirector's
// list: n handed-off UI Services.
func scaleList(tb testing.TB, n int, r routing) []byte {
	items := make([]corev1.Service, n)
	for i := range items {
		items[i] = scaleService(i, r, 1000+i)
	}
	b, err := json.Marshal(corev1.ServiceList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceList"},
		ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(1000 + n)}, Items: items})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// scaleEntries is what the redirector keeps of the same Services.
func scaleEntries(tb testing.TB, n int, r routing) []Entry {
	es := make([]Entry, 0, n)
	for i := range n {
		b, err := json.Marshal(scaleService(i, r, 1000+i))
		if err != nil {
			tb.Fatal(err)
		}
		svc, err := externaluri.Parse(b)
		if err != nil {
			tb.Fatal(err)
		}
		e, ok := FromService(svc)
		if !ok || e.Refused != "" {
			tb.Fatalf("%s: not an accepted hand-off: %+v", svc.Metadata.Name, e)
		}
		es = append(es, e)
	}
	return es
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkTable: what one change of the table costs (the table is rebuilt on every change
// the watch delivers, and its overlapping claims listed for the log).
func BenchmarkTable(b *testing.B) {
	for _, r := range []routing{routed, unrouted} {
		es := scaleEntries(b, scaleN, r)
		b.Run("build/"+string(r), func(b *testing.B) {
			for b.Loop() {
				NewTable("analytics", es)
			}
		})
		t := NewTable("analytics", es)
		b.Run("overlaps/"+string(r), func(b *testing.B) {
			for b.Loop() {
				t.Overlaps()
			}
		})
	}
}

// BenchmarkChurn: an application ending (its Service handed off: one MODIFIED event) and an old
// one's Service deleted (one DELETED), at 10,000 Services; ns/op is the redirector's CPU per
// pair of events, so 10 endings a second cost 10 × ns/op each second.
func BenchmarkChurn(b *testing.B) {
	for _, r := range []routing{routed, unrouted} {
		b.Run(string(r), func(b *testing.B) {
			w := &Watcher{namespace: "analytics", entries: map[string]Entry{}, log: quietLog()}
			svcs := make([]*externaluri.Service, 2*scaleN)
			for i := range svcs {
				raw, _ := json.Marshal(scaleService(i, r, 1000+i))
				svcs[i], _ = externaluri.Parse(raw)
			}
			for i := range scaleN {
				w.apply("ADDED", svcs[i])
			}
			w.publish()
			i := 0
			for b.Loop() {
				if w.apply("MODIFIED", svcs[(scaleN+i)%len(svcs)]) {
					w.publish()
				}
				if w.apply("DELETED", svcs[i%len(svcs)]) {
					w.publish()
				}
				i++
			}
			if n := w.Table().Len(); n != scaleN {
				b.Fatalf("%d entries after the churn, want %d", n, scaleN)
			}
		})
	}
}

// BenchmarkLookup: one request through the handler at 10,000 Services, found by the route's
// header (the function's HTTPRoutes set it), by the Service's DNS name, or by its route claim
// (an Ingress); heap-MiB is the table's live heap.
func BenchmarkLookup(b *testing.B) {
	es := scaleEntries(b, scaleN, routed)
	before := liveHeap()
	t := NewTable("analytics", es)
	tableHeap := liveHeap() - before
	h := Handler{HistoryURL: "https://spark-history.example.com", Source: fakeStore{t}}
	cases := []struct {
		name, host, path string
		hdr              map[string]string
	}{
		{"header", "spark.example.com", "/jobs/", map[string]string{"X-Sparkui-Service": scaleName(7321)}},
		{"service-host", scaleName(7321) + ".analytics.svc.cluster.local:4040", "/jobs/", nil},
		{"route-claim", "spark.example.com", "/spark/analytics/app07321/jobs/job/", nil},
		{"no-match", "spark.example.com", "/spark/analytics/other/jobs/", nil},
	}
	for _, c := range cases {
		req := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		want := http.StatusFound
		if c.name == "no-match" {
			want = http.StatusNotFound
		}
		b.Run(c.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
			if w.code != want {
				b.Fatalf("%d, want %d", w.code, want)
			}
			b.ReportMetric(float64(tableHeap)/(1<<20), "table-MiB")
		})
	}
}

type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRelist: the list the Reflector makes after a watch expired (410 Gone), at 10,000
// Services: the request to a local server answering the list's JSON, its decoding, and the
// table rebuilt from it. MB/s is over the list's JSON; peak-MiB is the largest live heap seen
// during the relists (sampled every millisecond), held-MiB what stays live after them.
func BenchmarkRelist(b *testing.B) {
	body := scaleList(b, scaleN, routed)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	w, err := NewWatcher(&rest.Config{Host: srv.URL}, "analytics", quietLog())
	if err != nil {
		b.Fatal(err)
	}
	w.entries = map[string]Entry{}
	lw, st := listWatch{w}, store{w}
	base := liveHeap()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		obj, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		l := obj.(*list)
		items := make([]any, len(l.Items))
		for i := range l.Items {
			items[i] = &l.Items[i]
		}
		if err := st.Replace(items, l.ResourceVersion); err != nil {
			b.Fatal(err)
		}
	}
	close(stop)
	<-sampled
	if n := w.Table().Len(); n != scaleN {
		b.Fatalf("%d entries after the relist, want %d", n, scaleN)
	}
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-MiB")
	b.ReportMetric(float64(liveHeap()-min(base, liveHeap()))/(1<<20), "held-MiB")
}

// BenchmarkServeLoopback: requests a second served on loopback by the redirector's handler
// over 10,000 Services, each request through a route naming a random Service (keep-alive
// clients, GOMAXPROCS of them; client and server share the machine's cores).
func BenchmarkServeLoopback(b *testing.B) {
	t := NewTable("analytics", scaleEntries(b, scaleN, routed))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: Handler{HistoryURL: "https://spark-history.example.com", Source: fakeStore{t}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	client := &http.Client{
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	url := "http://" + ln.Addr().String() + "/jobs/"
	var wrong atomic.Int64
	b.ResetTimer() // not the table's setup
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("X-Sparkui-Service", scaleName(rand.IntN(scaleN)))
			resp, err := client.Do(req)
			if err != nil {
				wrong.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusFound {
				wrong.Add(1)
			}
		}
	})
	if n := wrong.Load(); n > 0 {
		b.Fatalf("%d requests not answered 302", n)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
