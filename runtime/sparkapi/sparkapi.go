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
	// Match: a live application UI that is this application's.
	Match
	// StartingUp: Spark's "Spark is starting up" page, an empty listing, or one of the 404/302
	// windows of a starting UI: ask again at the next poll.
	StartingUp
	// Denied: an authentication filter (spark.ui.filters) refuses the probe (401, 403, or a
	// redirect to a login page): identity cannot be checked, never bound.
	Denied
	// OtherApp: a live application UI of another application. A listening socket serves one
	// application for its whole life, so this never changes for that socket.
	OtherApp
	// NotSpark: it answers, but not as Spark's REST API (another program, the plain connector
	// of a TLS UI, plain HTTP where HTTPS was expected).
	NotSpark
	// NotLive: Spark's REST API, but not a live application UI: a listing of several
	// applications (a History Server) or a completed attempt. Never this Pod's UI.
	NotLive
	// Unproven: under hostNetwork, a live application UI that cannot be proven to be this
	// application: another id, and no (or a redacted) spark.kubernetes.driver.pod.name.
	// "Cannot tell", never "another application"; not bound.
	Unproven
	// TLSMismatch: the socket speaks the other scheme than the runtime was configured for: the
	// plain connector of a TLS UI redirecting to https://host:securePort (JettyUtils
	// createRedirectHttpsHandler), plain HTTP where HTTPS was expected, or a handshake the UI
	// refuses (spark.ssl.ui.needClientAuth). Never bound: the Service's scheme would be wrong.
	TLSMismatch
	// Failing: the REST API answers 5xx. A starting UI does not (its init handler answers 200
	// on every path, SparkUI.initHandler); asked again with a bounded backoff and reported.
	Failing
)

var verdictNames = [...]string{"unknown", "match", "starting-up", "denied", "other-app", "not-spark", "not-live", "unproven", "tls-mismatch", "failing"}

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
	// Status is the HTTP status of the answer that decided the verdict (0: none).
	Status int
}

// StartingUpMarker is the text of the page Spark serves on every path until the UI is ready
// (core/src/main/scala/org/apache/spark/ui/SparkUI.scala, initHandler).
const StartingUpMarker = "Spark is starting up"

// Redacted is what Spark shows instead of a value spark.redaction.regex matches (key or value):
// core/src/main/scala/org/apache/spark/util/Utils.scala, REDACTION_REPLACEMENT_TEXT.
const Redacted = "*********(redacted)"

// Spark properties that name the driver Pod.
const (
	PodNameProperty   = "spark.kubernetes.driver.pod.name"
	NamespaceProperty = "spark.kubernetes.namespace"
)

// Identity is what identifies this application.
//
// On the Pod network every listening socket is this Pod's: a live application UI there is
// this application's whatever its id (client mode: spark.app.id if set, else
// spark-application-<millis>; driver-only mode on Spark 3: local-<millis>; SparkContext.scala).
// Under hostNetwork the sockets are the node's: the UI must also prove it is this application,
// by its id or by spark.kubernetes.driver.pod.name (and spark.kubernetes.namespace, when
// listed: Pod names repeat across namespaces).
type Identity struct {
	AppID       string
	PodName     string
	Namespace   string
	HostNetwork bool
}

// Prober asks sockets whether they are this application's UI.
type Prober struct {
	ID        Identity
	TLS       bool // use https (the HTTPS connector), without verifying the certificate
	client    *http.Client
	userAgent string
	// Filters is spark.ui.filters, named when a filter refuses a probe.
	Filters string
	// Cred, when set, is sent to a UI that refused an anonymous request.
	Cred *Credential
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
			// The plain connector redirects to the HTTPS one when TLS is on, and single
			// sign-on filters redirect to their login page: redirects are answers, never
			// followed.
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

// application is an ApplicationInfo of Spark's REST API (status/api/v1/api.scala).
type application struct {
	ID       string `json:"id"`
	Attempts []struct {
		Completed bool `json:"completed"`
	} `json:"attempts"`
}

// Probe asks the server at hostport (an "ip:port" or "[ip6]:port") who it is.
func (p *Prober) Probe(ctx context.Context, hostport string) Result {
	base := p.Scheme() + "://" + hostport
	authed := false // the credential was needed: send it on the next request too
	r := p.identify(ctx, base, &authed)
	if r.Verdict != Match {
		return r
	}
	return p.notHistory(ctx, base, &authed, r)
}

// identify reads the REST API's listing (and, under hostNetwork, the environment).
func (p *Prober) identify(ctx context.Context, base string, authed *bool) Result {
	var apps []application
	if r, ok := p.getJSON(ctx, base+"/api/v1/applications", maxListBody, &apps, authed); !ok {
		return r
	}
	// A live UI lists exactly its own application (ApplicationListResource over the UI's
	// store); a History Server lists every application it has event logs for, in-progress
	// ones included: "the listing contains our id" proves nothing.
	switch {
	case len(apps) == 0:
		// The REST API answers before the application registers itself.
		return Result{Verdict: StartingUp, Status: http.StatusOK, Detail: "REST API lists no application yet"}
	case len(apps) > 1:
		return Result{Verdict: NotLive, Status: http.StatusOK, Detail: fmt.Sprintf("lists %d applications: a Spark History Server, not a live application UI", len(apps))}
	}
	app := apps[0]
	if len(app.Attempts) == 0 {
		return Result{Verdict: NotLive, AppID: app.ID, Status: http.StatusOK, Detail: "application " + app.ID + " has no attempt: not a live application UI"}
	}
	for _, at := range app.Attempts {
		if at.Completed {
			return Result{Verdict: NotLive, AppID: app.ID, Status: http.StatusOK, Detail: "application " + app.ID + "'s attempt is completed: not a live application UI"}
		}
	}
	if p.ID.AppID != "" && app.ID == p.ID.AppID {
		return Result{Verdict: Match, AppID: app.ID, Status: http.StatusOK, Detail: "live application UI, id " + app.ID}
	}
	if !p.ID.HostNetwork {
		return Result{Verdict: Match, AppID: app.ID, Status: http.StatusOK,
			Detail: "live application UI, id " + app.ID + " (Pod network: every listening socket is this Pod's)"}
	}
	// hostNetwork, another id (client mode, Spark 3 driver-only mode): the environment must
	// name this driver Pod.
	var env struct {
		SparkProperties [][]string `json:"sparkProperties"`
	}
	r, ok := p.getJSON(ctx, base+"/api/v1/applications/"+url.PathEscape(app.ID)+"/environment", maxEnvBody, &env, authed)
	if !ok {
		if r.Status == http.StatusNotFound {
			// Listed but no environment yet: the UI is starting (the environment is stored
			// after the application registers).
			return Result{Verdict: StartingUp, AppID: app.ID, Status: r.Status, Detail: "application " + app.ID + " listed, its environment not stored yet (404)"}
		}
		return r
	}
	props := map[string]string{}
	for _, kv := range env.SparkProperties {
		if len(kv) == 2 && (kv[0] == PodNameProperty || kv[0] == NamespaceProperty) {
			props[kv[0]] = kv[1]
		}
	}
	pod, hasPod := props[PodNameProperty]
	ns, hasNS := props[NamespaceProperty]
	res := Result{AppID: app.ID, Status: http.StatusOK}
	// An empty id (a run whose id comes from a Pod label it lacks, $SPARKUI_APP_ID) matched
	// nothing above: the Pod's name is the only proof left.
	notUs := "application " + app.ID + " is not " + p.ID.AppID
	if p.ID.AppID == "" {
		notUs = "application " + app.ID + " (this Pod's application id is not known)"
	}
	switch {
	case p.ID.PodName == "":
		res.Verdict, res.Detail = Unproven, notUs+" and this Pod's name is not known"
	case !hasPod:
		res.Verdict, res.Detail = Unproven, notUs+" and its environment has no "+PodNameProperty+
			" (under hostNetwork set spark.app.id or "+PodNameProperty+" so the runtime can tell)"
	case pod == Redacted || (hasNS && ns == Redacted):
		// Utils.redact hides a value whose key or value matches spark.redaction.regex (a Pod
		// or namespace named token-…): that proves nothing either way.
		res.Verdict, res.Detail = Unproven, notUs+" and its driver Pod's name is redacted by spark.redaction.regex: cannot tell"
	case pod != p.ID.PodName || (hasNS && p.ID.Namespace != "" && ns != p.ID.Namespace):
		res.Verdict, res.Detail = OtherApp, fmt.Sprintf("application %s runs in driver Pod %s/%s, not %s/%s", app.ID, ns, pod, p.ID.Namespace, p.ID.PodName)
	default:
		res.Verdict, res.Detail = Match, fmt.Sprintf("live application UI, id %s, runs in this driver Pod %s/%s", app.ID, ns, pod)
	}
	return res
}

// refusal says whether resp is an authentication filter's refusal, and describes it. Spark's
// UI ACLs never refuse an anonymous request; filters in spark.ui.filters do, on /api/v1 too.
func (p *Prober) refusal(req *http.Request, resp *http.Response) (string, bool) {
	switch code := resp.StatusCode; {
	case code == http.StatusForbidden:
		return fmt.Sprintf("%s answers %s (an authentication filter: Spark's JWSFilter answers 403 without a valid bearer token)", req.URL.Path, resp.Status), true
	case code == http.StatusUnauthorized:
		what := "an authentication filter"
		if wa := resp.Header.Get("WWW-Authenticate"); wa != "" {
			what += " asking for " + strings.Fields(wa)[0]
			if strings.HasPrefix(strings.ToLower(wa), "negotiate") {
				what += " (SPNEGO/Kerberos)"
			}
		}
		return fmt.Sprintf("%s answers %s (%s)", req.URL.Path, resp.Status, what), true
	case code >= 300 && code < 400 && !p.httpsRedirect(req, resp) && !attachingRedirect(req, resp):
		return fmt.Sprintf("%s redirects to %s (a single sign-on filter's login page?)", req.URL.Path, resp.Header.Get("Location")), true
	}
	return "", false
}

func (p *Prober) do(ctx context.Context, u string, withCred bool) (*http.Request, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", p.userAgent)
	if withCred {
		name, value, err := p.Cred.Header()
		if err != nil {
			return req, nil, credError{err}
		}
		req.Header.Set(name, value)
	}
	resp, err := p.client.Do(req)
	return req, resp, err
}

// getJSON GETs url into v. ok is false when the answer decided the verdict already. The
// credential, when there is one, is sent only to a UI that refused an anonymous request (the
// node's other listeners under hostNetwork never see it unless they ask for authentication);
// *authed records that, so the next request sends it at once.
func (p *Prober) getJSON(ctx context.Context, u string, limit int64, v any, authed *bool) (Result, bool) {
	req, resp, err := p.do(ctx, u, *authed)
	if what, refused := "", false; err == nil {
		if what, refused = p.refusal(req, resp); refused && p.Cred != nil && !*authed {
			_ = resp.Body.Close()
			*authed = true
			req, resp, err = p.do(ctx, u, true)
			if ce := (credError{}); errors.As(err, &ce) {
				err = fmt.Errorf("%s; %w", what, ce)
			}
		}
	}
	if err != nil {
		if ce := (credError{}); errors.As(err, &ce) {
			// Never bound without verifying it: a credential that cannot be read refuses.
			return Result{Verdict: Denied, Detail: err.Error() + p.filterHint()}, false
		}
		v := classifyTransportError(err)
		if v == NotSpark {
			if what, ok := p.tlsTrouble(err); ok {
				return Result{Verdict: TLSMismatch, Detail: what}, false
			}
		}
		return Result{Verdict: v, Detail: err.Error()}, false
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, limit)
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if what, refused := p.refusal(req, resp); refused {
		if *authed {
			what += "; it refused the credential from " + p.Cred.Path
		}
		return Result{Verdict: Denied, Status: resp.StatusCode, Detail: what + p.filterHint()}, false
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && p.httpsRedirect(req, resp):
		return Result{Verdict: TLSMismatch, Status: resp.StatusCode, Detail: fmt.Sprintf(
			"redirects to %s: Spark's UI has TLS on (spark.ssl.ui.enabled, or spark.ssl.enabled, perhaps from the image's spark-defaults.conf) but the runtime was configured for plain HTTP: set TLS where sparkui reads it (the application's conf or functionConfig)",
			resp.Header.Get("Location"))}, false
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && attachingRedirect(req, resp):
		return Result{Verdict: StartingUp, Status: resp.StatusCode, Detail: req.URL.Path + " redirects to " + resp.Header.Get("Location") + ": the UI's handlers are being attached"}, false
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return Result{Verdict: NotSpark, Status: resp.StatusCode, Detail: fmt.Sprintf("%s redirects to %s", req.URL.Path, resp.Header.Get("Location"))}, false
	case resp.StatusCode >= 500:
		return Result{Verdict: Failing, Status: resp.StatusCode, Detail: "Spark's REST API " + req.URL.Path + " answers " + resp.Status}, false
	case resp.StatusCode != http.StatusOK:
		return Result{Verdict: NotSpark, Status: resp.StatusCode, Detail: req.URL.Path + " answers " + resp.Status}, false
	case ct == "text/html":
		b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		if strings.Contains(string(b), StartingUpMarker) {
			return Result{Verdict: StartingUp, Status: resp.StatusCode, Detail: "Spark is starting up"}, false
		}
		return Result{Verdict: NotSpark, Status: resp.StatusCode, Detail: req.URL.Path + " answers HTML"}, false
	}
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return Result{Verdict: NotSpark, Status: resp.StatusCode, Detail: req.URL.Path + " is not Spark's JSON: " + err.Error()}, false
	}
	return Result{}, true
}

// tlsTrouble recognises a transport error that comes from TLS being on at one end only, or
// from a handshake the UI refuses, and says what to do.
func (p *Prober) tlsTrouble(err error) (string, bool) {
	var rh tls.RecordHeaderError
	msg := err.Error()
	switch {
	case p.TLS && (errors.As(err, &rh) || strings.Contains(msg, "server gave HTTP response to HTTPS client")):
		// net/http's "server gave HTTP response to HTTPS client": Spark's UI has TLS off.
		return "answers plain HTTP, but the runtime was configured for TLS (spark.ssl.ui.enabled): " + msg, true
	case p.TLS && strings.Contains(msg, "remote error: tls:"):
		// Jetty's SslContextFactory with needClientAuth aborts the handshake without a
		// client certificate (SSLOptions.createJettySslContextFactory: setNeedClientAuth).
		return "the UI refuses the TLS handshake (spark.ssl.ui.needClientAuth? the runtime has no client certificate and cannot verify this UI): " + msg, true
	case !p.TLS && strings.Contains(msg, "malformed HTTP response") && strings.Contains(msg, `\x15\x03`):
		// A TLS alert record (0x15 0x03 …) answering plain HTTP.
		return "answers with TLS, but the runtime was configured for plain HTTP: " + msg, true
	}
	return "", false
}

// filterHint names the configured filters and what the runtime needs.
func (p *Prober) filterHint() string {
	var b strings.Builder
	if p.Filters != "" {
		b.WriteString("; spark.ui.filters=" + p.Filters)
	}
	if p.Cred == nil {
		b.WriteString("; the runtime cannot verify a UI behind a filter without a credential: mount one and pass --auth-bearer-file or --auth-header-file")
	}
	return b.String()
}

// credError is a credential file that cannot be used.
type credError struct{ err error }

func (e credError) Error() string { return e.err.Error() }
func (e credError) Unwrap() error { return e.err }

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
