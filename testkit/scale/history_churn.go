package scale

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/binder"
)

// noRedirect is a keep-alive client of conns connections that reports redirects instead of
// following them.
func noRedirect(conns int) *http.Client {
	return &http.Client{Timeout: 5 * time.Second,
		Transport:     &http.Transport{MaxIdleConnsPerHost: conns, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(c *http.Client, url string, hdr map[string]string) (code int, location, body string, err error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", "", err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b), err
}

// lookup asks the redirector at base for application i's Service as its route does (by the
// X-Sparkui-Service header, on a path of Spark's UI).
func lookup(c *http.Client, base string, i int) (code int, location string, err error) {
	code, location, _, err = get(c, base+"/jobs/", map[string]string{names.HeaderUIService: histService(i)})
	return code, location, err
}

// errorList keeps the first few errors of many goroutines, and counts them all.
type errorList struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (e *errorList) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.first) < 10 {
		e.first = append(e.first, fmt.Sprintf(format, args...))
	}
}

// lookups runs clients loopback clients against base until ctx ends, each asking in turn for
// a random one of applications lo..hi-1 (handed off for the whole run), and returns every
// request's latency; anything but a 302 to the application's page is an error.
func lookups(ctx context.Context, base string, clients, lo, hi int, errs *errorList) []time.Duration {
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := noRedirect(1)
			lat := make([]time.Duration, 0, 1<<16)
			for ctx.Err() == nil {
				i := lo + rand.IntN(hi-lo)
				t0 := time.Now()
				code, loc, err := lookup(c, base, i)
				lat = append(lat, time.Since(t0))
				if err != nil || code != http.StatusFound || loc != histWantLocation(i) {
					errs.add("lookup of %s: %d %q %v", histService(i), code, loc, err)
				}
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

// churnResult is what the churn did and saw.
type churnResult struct {
	handoff          []time.Duration // the hand-off's response → the first 302 for that Service
	handed, deleted  []int           // applications handed off, Services deleted
	issued, finished time.Time       // the churn's first tick; its last hand-off redirected
}

// churn ends rate applications a second for d: each tick hands the next of bound off as the
// runtime's withdrawal does (binder.Target.HandoffPatchWith, the same JSON Patch with the same
// guards and status annotations) and deletes the next of old. After each hand-off it asks for
// the Service every 5 ms until the redirector answers 302.
func churn(ctx context.Context, cs kubernetes.Interface, ns, base string, redirectorPort, rate int, d time.Duration,
	bound, old []int, errs *errorList) churnResult {
	var r churnResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	poll := noRedirect(rate)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	r.issued = time.Now()
	end := r.issued.Add(d)
	for k := 0; k < len(bound) && k < len(old); k++ {
		if k > 0 {
			<-tick.C
		}
		if time.Now().After(end) {
			break
		}
		i, j := bound[k], old[k]
		wg.Add(2)
		go func() {
			defer wg.Done()
			lat, err := handOff(ctx, cs, poll, ns, base, redirectorPort, i)
			if err != nil {
				errs.add("%v", err)
				return
			}
			mu.Lock()
			r.handoff = append(r.handoff, lat)
			r.handed = append(r.handed, i)
			mu.Unlock()
		}()
		go func() {
			defer wg.Done()
			if err := cs.CoreV1().Services(ns).Delete(ctx, histService(j), metav1.DeleteOptions{}); err != nil {
				errs.add("delete Service %s: %v", histService(j), err)
				return
			}
			mu.Lock()
			r.deleted = append(r.deleted, j)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.finished = time.Now()
	return r
}

// handOff patches application i's bound Service as its runtime's hand-off does and returns
// how long after the patch's response the redirector first sent a request for it to its page.
func handOff(ctx context.Context, cs kubernetes.Interface, c *http.Client, ns, base string, redirectorPort, i int) (time.Duration, error) {
	app := fmt.Sprintf("app%05d", i)
	tg := binder.Target{Namespace: ns, Service: histService(i), AppID: histAppID(i), PortName: "spark-ui",
		PodName: app + "-driver", PodUID: histPodUID(i), NoOwner: true, Selector: binder.DefaultSelector(histAppID(i))}
	patch := tg.HandoffPatchWith(binder.Handoff{URI: "https://shs.example.com/history/" + histAppID(i) + "/", Port: redirectorPort},
		binder.KeepURI, true, binder.State{State: names.UIStateHandedOff, Since: time.Now(), Pod: tg.PodName,
			Reason: "the driver ended; the History Server has the application"})
	if _, err := cs.CoreV1().Services(ns).Patch(ctx, tg.Service, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return 0, fmt.Errorf("hand-off patch of %s: %w", tg.Service, err)
	}
	t0 := time.Now()
	want := histWantLocation(i)
	for deadline := t0.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if code, loc, err := lookup(c, base, i); err == nil && code == http.StatusFound && loc == want {
			return time.Since(t0), nil
		}
	}
	code, loc, err := lookup(c, base, i)
	return 0, fmt.Errorf("%s handed off 30 s ago: the redirector answers %d %q %v, want 302 to %s", tg.Service, code, loc, err, want)
}
