// Package sparkapi asks a listening socket whether it is this application's Spark UI, through
// Spark's monitoring REST API (`/api/v1/applications` and `/api/v1/applications/<id>/environment`).
package sparkapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Verdict is what a probe concluded about a socket.
type Verdict int

const (
	// Unknown: the probe failed (connection refused, timeout, broken answer); try again later.
	Unknown Verdict = iota
	// Match: the REST API identifies this application.
	Match
	// StartingUp: Spark's "Spark is starting up" page (or a 5xx): ask again at the next poll.
	StartingUp
	// Denied: 401/403, UI ACLs hide the REST API; identity cannot be proven.
	Denied
	// OtherApp: the REST API names another application. A listening socket serves one
	// application for its whole life, so this never changes for that socket.
	OtherApp
	// NotSpark: it answers, but not as Spark's REST API (another program, a redirect to the
	// HTTPS connector, plain HTTP where HTTPS was expected).
	NotSpark
)

var verdictNames = [...]string{"unknown", "match", "starting-up", "denied", "other-app", "not-spark"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Result is a probe's verdict and what it saw.
type Result struct {
	Verdict Verdict
	AppID   string // the id Spark reported, when it did
	Detail  string // why, for logs
}

// StartingUpMarker is the text of the page Spark serves on every path until the UI is ready.
const StartingUpMarker = "Spark is starting up"

// Spark properties that name the driver Pod.
const (
	PodNameProperty   = "spark.kubernetes.driver.pod.name"
	NamespaceProperty = "spark.kubernetes.namespace"
)

// Identity is what identifies this application: its id (cluster mode: the
// spark-app-selector value) or the driver Pod's name and namespace (driver-only mode, where
// Spark's id is local-<millis>). Pod names repeat across namespaces, and under hostNetwork
// drivers of several namespaces share the node's sockets: when the environment names a
// namespace it must be this one.
type Identity struct {
	AppID     string
	PodName   string
	Namespace string
}

// Prober asks sockets whether they are this application's UI.
type Prober struct {
	ID        Identity
	TLS       bool // use https (the HTTPS connector), without verifying the certificate
	client    *http.Client
	userAgent string
}

// Body size limits: an application list is small; an environment lists the classpath.
const (
	maxListBody = 1 << 20
	maxEnvBody  = 8 << 20
)

// NewProber returns a Prober whose requests each take at most timeout.
func NewProber(id Identity, useTLS bool, timeout time.Duration) *Prober {
	tr := &http.Transport{
		Proxy:             nil, // loopback or own Pod IP: never through a proxy
		DisableKeepAlives: true,
		// The peer is this Pod's own network namespace and identity is proven by the REST
		// answer, not by a certificate (Spark's keystore is rarely issued for 127.0.0.1).
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
		DialContext:            (&net.Dialer{Timeout: timeout}).DialContext,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Prober{
		ID:  id,
		TLS: useTLS,
		// Who asks, for the access logs of the UIs it probes (under hostNetwork, other
		// drivers' too).
		userAgent: "sparkui-runtime (driver Pod " + id.Namespace + "/" + id.PodName + ")",
		client: &http.Client{
			Transport: tr,
			Timeout:   timeout,
			// The plain connector redirects to the HTTPS one when TLS is on: that is not the
			// port to bind, so redirects are answers, never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Scheme is http or https.
func (p *Prober) Scheme() string {
	if p.TLS {
		return "https"
	}
	return "http"
}

// Probe asks the server at hostport (an "ip:port" or "[ip6]:port") who it is.
func (p *Prober) Probe(ctx context.Context, hostport string) Result {
	base := p.Scheme() + "://" + hostport
	var apps []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if r, ok := p.getJSON(ctx, base+"/api/v1/applications", maxListBody, &apps); !ok {
		return r
	}
	if len(apps) == 0 {
		// The REST API answers before the application registers itself.
		return Result{Verdict: StartingUp, Detail: "REST API lists no application yet"}
	}
	ids := make([]string, 0, len(apps))
	for _, a := range apps {
		if p.ID.AppID != "" && a.ID == p.ID.AppID {
			return Result{Verdict: Match, AppID: a.ID, Detail: "application id " + a.ID}
		}
		ids = append(ids, a.ID)
	}
	if p.ID.PodName == "" {
		return Result{Verdict: OtherApp, AppID: ids[0], Detail: "application id " + strings.Join(ids, ",")}
	}
	// A live UI lists exactly one application (a history server lists many: not ours).
	const maxEnv = 2
	for i, id := range ids {
		if i == maxEnv {
			break
		}
		var env struct {
			SparkProperties [][]string `json:"sparkProperties"`
		}
		r, ok := p.getJSON(ctx, base+"/api/v1/applications/"+url.PathEscape(id)+"/environment", maxEnvBody, &env)
		if !ok {
			return r
		}
		props := map[string]string{}
		for _, kv := range env.SparkProperties {
			if len(kv) == 2 && (kv[0] == PodNameProperty || kv[0] == NamespaceProperty) {
				props[kv[0]] = kv[1]
			}
		}
		ns, hasNS := props[NamespaceProperty]
		if props[PodNameProperty] == p.ID.PodName && (!hasNS || p.ID.Namespace == "" || ns == p.ID.Namespace) {
			return Result{Verdict: Match, AppID: id, Detail: fmt.Sprintf("application %s runs in Pod %s/%s", id, ns, p.ID.PodName)}
		}
	}
	return Result{Verdict: OtherApp, AppID: ids[0], Detail: "application id " + strings.Join(ids, ",") + ", driver Pod is not " + p.ID.Namespace + "/" + p.ID.PodName}
}

// getJSON GETs url into v. ok is false when the answer decided the verdict already.
func (p *Prober) getJSON(ctx context.Context, u string, limit int64, v any) (Result, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Result{Verdict: NotSpark, Detail: err.Error()}, false
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", p.userAgent)
	resp, err := p.client.Do(req)
	if err != nil {
		return Result{Verdict: classifyTransportError(err), Detail: err.Error()}, false
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, limit)
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return Result{Verdict: Denied, Detail: fmt.Sprintf("%s answers %s (UI ACLs?): identity cannot be checked", req.URL.Path, resp.Status)}, false
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return Result{Verdict: NotSpark, Detail: fmt.Sprintf("redirects to %s (the plain connector of a TLS UI?)", resp.Header.Get("Location"))}, false
	case resp.StatusCode >= 500:
		return Result{Verdict: StartingUp, Detail: "answers " + resp.Status}, false
	case resp.StatusCode != http.StatusOK:
		return Result{Verdict: NotSpark, Detail: req.URL.Path + " answers " + resp.Status}, false
	case ct == "text/html":
		b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		if strings.Contains(string(b), StartingUpMarker) {
			return Result{Verdict: StartingUp, Detail: "Spark is starting up"}, false
		}
		return Result{Verdict: NotSpark, Detail: req.URL.Path + " answers HTML"}, false
	}
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return Result{Verdict: NotSpark, Detail: req.URL.Path + " is not Spark's JSON: " + err.Error()}, false
	}
	return Result{}, true
}

// classifyTransportError: a refused connection or a timeout says nothing about who owns the
// port (closing, or just busy): Unknown. A server that hangs up on an HTTP request or speaks
// something else (Spark's RPC port, TLS against a plain server) is not Spark's REST API.
func classifyTransportError(err error) Verdict {
	var nerr net.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Unknown
	case errors.As(err, &nerr) && nerr.Timeout():
		return Unknown
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EADDRNOTAVAIL),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return Unknown
	}
	return NotSpark
}

// Unreachable reports whether a result is a connection failure, for callers that have
// another address to try (a socket listening on :: may be reachable on 127.0.0.1 only).
func (r Result) Unreachable() bool { return r.Verdict == Unknown }

// CloseIdle releases the Prober's connections (there are none kept, but be tidy).
func (p *Prober) CloseIdle() { p.client.CloseIdleConnections() }
