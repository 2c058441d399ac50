package externaluri

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func svcJSON(t *testing.T, js string) *Service {
	t.Helper()
	s, err := Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		host string
		port int32
		tls  bool
		want string
	}{
		{"192.0.2.10", 30080, false, "http://192.0.2.10:30080"},
		{"192.0.2.10", 30080, true, "https://192.0.2.10:30080"},
		{"2001:db8::1", 30080, false, "http://[2001:db8::1]:30080"},
		{"2001:DB8:0:0::1", 443, true, "https://[2001:db8::1]"},
		{"ui.example.com", 80, false, "http://ui.example.com"},
		{"ui.example.com", 443, false, "http://ui.example.com:443"},
		{"ui.example.com", 80, true, "https://ui.example.com:80"},
		{"ui.example.com", 443, true, "https://ui.example.com"},
	} {
		if got := Format(c.host, c.port, c.tls); got != c.want {
			t.Errorf("Format(%q, %d, %v) = %q, want %q", c.host, c.port, c.tls, got, c.want)
		}
	}
}

func env(kv ...string) Env {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return Env{Getenv: func(k string) string { return m[k] }}
}

func TestNew(t *testing.T) {
	for _, mode := range []string{"", "none", "annotation"} {
		if r, err := New(mode, Env{}); r != nil || err != nil {
			t.Errorf("New(%q) = %v, %v; want no resolver", mode, r, err)
		}
	}
	if _, err := New("ingress", Env{}); err == nil || !strings.Contains(err.Error(), "loadBalancer, nodePort") {
		t.Errorf("unknown mode: %v", err)
	}
	if _, err := New("nodePort", Env{}); err == nil || !strings.Contains(err.Error(), "HOST_IP") {
		t.Errorf("nodePort without HOST_IP: %v", err)
	}
	if _, err := New("nodePort", env("HOST_IP", "node-1")); err == nil || !strings.Contains(err.Error(), "not an IP") {
		t.Errorf("nodePort with a name: %v", err)
	}
}

func TestNodePort(t *testing.T) {
	ctx := context.Background()
	svc := svcJSON(t, `{"spec":{"type":"NodePort","ports":[{"name":"spark-ui","port":4040,"nodePort":31234}]}}`)
	for _, c := range []struct {
		host string
		tls  bool
		want string
	}{
		{"192.0.2.10", false, "http://192.0.2.10:31234"},
		{"192.0.2.10", true, "https://192.0.2.10:31234"},
		{"fd00::a", false, "http://[fd00::a]:31234"},
	} {
		r, err := New("nodePort", env("HOST_IP", c.host))
		if err != nil {
			t.Fatal(err)
		}
		if r.Polls() {
			t.Error("nodePort polls")
		}
		uri, done, err := r.Resolve(ctx, svc, c.tls)
		if uri != c.want || !done || err != nil {
			t.Errorf("%s tls=%v: %q %v %v, want %q", c.host, c.tls, uri, done, err, c.want)
		}
	}
	r, _ := New("nodePort", env("HOST_IP", "192.0.2.10"))
	if _, _, err := r.Resolve(ctx, svcJSON(t, `{"spec":{"type":"ClusterIP","ports":[{"name":"spark-ui","port":4040}]}}`), false); err == nil || !strings.Contains(err.Error(), "no nodePort") {
		t.Errorf("ClusterIP: %v", err)
	}
	if _, _, err := r.Resolve(ctx, svcJSON(t, `{}`), false); err == nil {
		t.Error("no port: no error")
	}
}

func TestLoadBalancer(t *testing.T) {
	ctx := context.Background()
	r, err := New("loadBalancer", Env{})
	if err != nil || !r.Polls() {
		t.Fatal(r, err)
	}
	for _, c := range []struct {
		js   string
		tls  bool
		want string
		done bool
	}{
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":4040,"nodePort":31000}]}}`, false, "", false},
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":4040}]},"status":{"loadBalancer":{"ingress":[{}]}}}`, false, "", false},
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":4040}]},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"},{"ip":"203.0.113.8"}]}}}`, false, "http://203.0.113.7:4040", true},
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":443}]},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}`, true, "https://203.0.113.7", true},
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":80}]},"status":{"loadBalancer":{"ingress":[{"hostname":"lb-1.elb.example.com"}]}}}`, false, "http://lb-1.elb.example.com", true},
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":4040}]},"status":{"loadBalancer":{"ingress":[{"ip":"2001:db8::7","hostname":"x"}]}}}`, true, "https://[2001:db8::7]:4040", true},
	} {
		uri, done, err := r.Resolve(ctx, svcJSON(t, c.js), c.tls)
		if uri != c.want || done != c.done || err != nil {
			t.Errorf("%s: %q %v %v, want %q %v", c.js, uri, done, err, c.want, c.done)
		}
	}
	if _, _, err := r.Resolve(ctx, svcJSON(t, `{"spec":{"type":"NodePort","ports":[{"port":4040}]}}`), false); err == nil {
		t.Error("NodePort Service: no error")
	}
}

func TestWait(t *testing.T) {
	b := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 1 << 30}
	seq := func(states ...string) Getter {
		i := 0
		return func(context.Context) (*Service, bool, error) {
			js := states[min(i, len(states)-1)]
			i++
			switch js {
			case "404":
				return nil, false, nil
			case "err":
				return nil, false, errors.New("connection refused")
			}
			s, err := Parse([]byte(js))
			return s, true, err
		}
	}
	const (
		unbound   = `{"spec":{}}`
		bound     = `{"spec":{"selector":{"spark-app-selector":"a"}}}`
		published = `{"metadata":{"annotations":{"sparkui.dev/resolved-external-uri":"http://h:1"}},"spec":{"selector":{"spark-app-selector":"a"}}}`
		withdrawn = `{"metadata":{"annotations":{"sparkui.dev/resolved-external-uri":"http://h:1"}},"spec":{"selector":{"sparkui.dev/withdrawn":"u"}}}`
	)
	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	if uri, err := Wait(ctx(), seq("404", "err", unbound, bound, published), b, nil); uri != "http://h:1" || err != nil {
		t.Errorf("published: %q %v", uri, err)
	}
	if _, err := Wait(ctx(), seq(unbound, withdrawn), b, nil); !errors.Is(err, ErrWithdrawn) {
		t.Errorf("withdrawn: %v", err)
	}
	// Handed off to the History Server: withdrawn for every other purpose, its page told.
	handedOff := `{"metadata":{"annotations":{"sparkui.dev/history-uri":"https://shs/history/a/"}},"spec":{"selector":{"sparkui.dev/history-redirector":"true"}}}`
	var h *HandedOff
	if _, err := Wait(ctx(), seq(bound, handedOff), b, nil); !errors.Is(err, ErrHandedOff) || !errors.As(err, &h) || h.HistoryURI != "https://shs/history/a/" {
		t.Errorf("handed off: %v", err)
	}
	// A stale URI on a handed-off Service is never returned.
	if _, err := Wait(ctx(), seq(`{"metadata":{"annotations":{"sparkui.dev/resolved-external-uri":"http://h:1"}},"spec":{"selector":{"sparkui.dev/history-redirector":"true"}}}`), b, nil); !errors.Is(err, ErrHandedOff) {
		t.Errorf("handed off with a URI: %v", err)
	}
	if _, err := Wait(ctx(), seq(bound, "404"), b, nil); !errors.Is(err, ErrDeleted) {
		t.Errorf("deleted: %v", err)
	}
	if _, err := Wait(ctx(), seq(bound), b, nil); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no sparkui.dev/resolved-external-uri annotation yet") {
		t.Errorf("timeout: %v", err)
	}
	if _, err := Wait(ctx(), seq("404"), b, nil); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("never there: %v", err)
	}
	// Withdrawn by an earlier driver Pod, and the next one's runtime says it waits: waited
	// for, the reason told once and in the timeout.
	waiting := `{"metadata":{"annotations":{"sparkui.dev/ui-state":"waiting","sparkui.dev/ui-since":"2026-12-05T18:31:16Z",` +
		`"sparkui.dev/ui-pod":"wc-2-driver","sparkui.dev/ui-reason":"port 4040: TLS the runtime cannot verify"}},"spec":{"selector":{"sparkui.dev/withdrawn":"u"}}}`
	var told []string
	const want = "the UI Service is not bound yet: the runtime is waiting since 2026-12-05T18:31:16Z (driver Pod wc-2-driver): port 4040: TLS the runtime cannot verify"
	if _, err := Wait(ctx(), seq(unbound, waiting), b, func(s string) { told = append(told, s) }); !errors.Is(err, ErrTimeout) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("waiting: %v", err)
	}
	if len(told) != 2 || told[1] != want {
		t.Errorf("told %q, want the unbound Service then %q", told, want)
	}
}

func TestBoundDefinition(t *testing.T) {
	for js, want := range map[string][3]bool{ // bound, handed off, withdrawn
		`{"spec":{}}`: {false, false, false},
		`{"spec":{"selector":{"spark-app-selector":"a","spark-role":"driver"}}}`: {true, false, false},
		`{"spec":{"selector":{"sparkui.dev/withdrawn":"u"}}}`:                    {false, false, true},
		`{"spec":{"selector":{"sparkui.dev/history-redirector":"true"}}}`:        {false, true, false},
	} {
		s, err := Parse([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		if got := [3]bool{s.Bound(), s.HandedOff(), s.Withdrawn()}; got != want {
			t.Errorf("%s: bound, handed off, withdrawn = %v, want %v", js, got, want)
		}
	}
	s, _ := Parse([]byte(`{"metadata":{"annotations":{"sparkui.dev/history-uri":"https://shs/history/a/"}},"spec":{"selector":{"spark-app-selector":"a"}}}`))
	if u := s.HistoryURI(); u != "" {
		t.Errorf("a bound Service's stale history URI %q is reported", u)
	}
}
