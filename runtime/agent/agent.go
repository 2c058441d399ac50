// Package agent is the runtime's life: a watcher finds the UI and notices when it goes away,
// a reconciler makes the UI Service match (one guarded PATCH per change, retried with capped,
// jittered exponential backoff), and withdrawal requests (preStop, SIGTERM) end it.
package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/runtime/control"
	"github.com/sparkui/sparkui/runtime/discover"
	"github.com/sparkui/sparkui/runtime/externaluri"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// Config is everything the runtime is told.
type Config struct {
	sidecar.Config
	PodName, PodNamespace, PodUID string

	Selector map[string]string // default spark-app-selector=<app-id>, spark-role=driver

	Poll           time.Duration // watch interval; default 100ms
	ProbeTimeout   time.Duration // one REST API request; default 1s
	RequestTimeout time.Duration // one API server request; default 5s
	WaitLog        time.Duration // period of "still waiting for the UI"; default 30s
	ServiceWait    time.Duration // 404 retries before it is reported as fatal; default 2m
	// Backoff between failed API requests: capped, exponential, jittered. Default 200ms×2
	// up to 10s (unreachable API server) and up to 30s (RBAC, missing or foreign Service).
	Backoff, FatalBackoff wait.Backoff

	Socket         string // control socket; "" = none
	StateFile      string // remembers a binding across container restarts; "" = none
	TerminationLog string // last fatal reason; "" = none
	ProcRoot       string // "" = /proc
	Sockets        string // where the listening sockets are read: auto (default), netlink, proc

	// Getenv is where resolvers read their environment ($HOST_IP); default os.Getenv.
	Getenv func(string) string
	// URIPoll is the backoff between reads of the Service while a load balancer's ingress is
	// not there yet; default 1s×2 up to 30s, jitter 0.5.
	URIPoll wait.Backoff
}

func (c *Config) defaults() {
	if c.Poll <= 0 {
		c.Poll = 100 * time.Millisecond
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = time.Second
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 5 * time.Second
	}
	if c.WaitLog <= 0 {
		c.WaitLog = 30 * time.Second
	}
	if c.ServiceWait <= 0 {
		c.ServiceWait = 2 * time.Minute
	}
	if c.Backoff.Duration <= 0 {
		c.Backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 10 * time.Second}
	}
	if c.FatalBackoff.Duration <= 0 {
		c.FatalBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 30 * time.Second}
	}
	if c.URIPoll.Duration <= 0 {
		c.URIPoll = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 30 * time.Second}
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Role == "" {
		c.Role = sidecar.DefaultRole(c.Service)
	}
	if len(c.Selector) == 0 {
		c.Selector = binder.DefaultSelector(c.AppID)
	}
}

// Validate reports a configuration the runtime cannot work with.
func (c *Config) Validate() error {
	var errs []string
	if c.Service == "" {
		errs = append(errs, "--service is required")
	}
	if c.AppID == "" {
		errs = append(errs, "--app-id is required")
	}
	for _, e := range [][2]string{{sidecar.EnvPodName, c.PodName}, {sidecar.EnvPodNamespace, c.PodNamespace}, {sidecar.EnvPodUID, c.PodUID}} {
		if e[1] == "" {
			errs = append(errs, "$"+e[0]+" is required (downward API)")
		}
	}
	if c.UIPort < 0 || c.UIPort > 65535 || c.SSLPort < 0 || c.SSLPort > 65535 || c.MaxRetries < 0 {
		errs = append(errs, "ports must be in 0-65535 and --max-retries ≥ 0")
	}
	if c.Getenv != nil {
		if _, err := externaluri.New(c.ExternalURI, externaluri.Env{Getenv: c.Getenv}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// PortRange is the ports the UI may bind: empty (0, 0) for a random port.
func (c *Config) PortRange() (first, last int) {
	first = c.UIPort
	if c.TLS {
		first = c.SSLPort
	}
	if first == 0 {
		return 0, 0
	}
	return first, min(first+c.MaxRetries, 65535)
}

// PortName is the name of the UI Service's port.
func (c *Config) PortName() string {
	return sidecar.PortName(c.TLS)
}

// Status is the UI Service's state as last acknowledged by the API server.
type Status struct {
	Bound bool
	Port  int
	Final bool      // withdrawn for good (preStop or SIGTERM)
	At    time.Time // when the API server acknowledged it
	Err   string    // the last failure since, if any
	URI   string    // the external URI the runtime published for this binding (nodePort, loadBalancer)
}

type desire struct {
	bound  bool
	port   int
	reason string
}

func (d desire) same(o desire) bool { return d.bound == o.bound && (!d.bound || d.port == o.port) }

// Agent is a running runtime.
type Agent struct {
	cfg    Config
	log    *slog.Logger
	client *binder.Client
	finder *discover.Finder
	prober *sparkapi.Prober
	uri    externaluri.Resolver // nil: the runtime does not publish the URI

	mu       sync.Mutex
	want     desire
	wantGen  uint64
	final    bool
	have     desire
	haveGen  uint64
	unknown  bool // the last write failed: the Service's state is not known
	status   Status
	changed  chan struct{} // closed and replaced whenever status changes
	kick     chan struct{}
	cancelOp context.CancelFunc // cancels the request in flight when want changes
	fatalMsg string
}

// New prepares an agent; restCfg is the API server's configuration.
func New(cfg Config, restCfg *rest.Config, log *slog.Logger) (*Agent, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	table, err := discover.Open(cfg.Sockets, cfg.ProcRoot)
	if err != nil {
		return nil, err
	}
	log.Info("listening sockets read through "+table.Name(), "source", table.Name())
	rc := rest.CopyConfig(restCfg)
	rc.Timeout = cfg.RequestTimeout
	client, err := binder.NewClient(rc, binder.Target{
		Namespace: cfg.PodNamespace, Service: cfg.Service, AppID: cfg.AppID, PortName: cfg.PortName(),
		PodName: cfg.PodName, PodUID: cfg.PodUID, Selector: cfg.Selector, Role: cfg.Role,
	})
	if err != nil {
		return nil, err
	}
	resolver, err := externaluri.New(cfg.ExternalURI, externaluri.Env{Getenv: cfg.Getenv})
	if err != nil {
		return nil, err
	}
	prober := sparkapi.NewProber(sparkapi.Identity{AppID: cfg.AppID, PodName: cfg.PodName, Namespace: cfg.PodNamespace}, cfg.TLS, cfg.ProbeTimeout)
	first, last := cfg.PortRange()
	a := &Agent{
		cfg:     cfg,
		log:     log,
		client:  client,
		prober:  prober,
		uri:     resolver,
		finder:  discover.NewFinder(table, prober, discover.Options{FirstPort: first, LastPort: last, Wait: cfg.Poll * 8 / 10}),
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
	}
	// A previous run of this container may have bound the Service: start from what it
	// recorded, so that a UI gone meanwhile is withdrawn at the first pass.
	if p := a.readState(); p > 0 {
		a.have = desire{bound: true, port: p}
		a.want = a.have
		a.status = Status{Bound: true, Port: p}
		// Its response (and so the nodePort and the annotations) is gone with that run: the
		// binding is written again, whose response says them.
		a.unknown = resolver != nil
		log.Info("a previous run bound the UI Service", "port", p)
	}
	return a, nil
}

// Status is the last acknowledged state.
func (a *Agent) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status
}

// WaitFor waits until cond holds for the status, or ctx is done.
func (a *Agent) WaitFor(ctx context.Context, cond func(Status) bool) (Status, error) {
	for {
		a.mu.Lock()
		st, ch := a.status, a.changed
		a.mu.Unlock()
		if cond(st) {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

func (a *Agent) setWant(d desire) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.final {
		return
	}
	a.setWantLocked(d)
}

func (a *Agent) setWantLocked(d desire) {
	if a.wantGen > 0 && d.same(a.want) {
		return
	}
	a.want = d
	a.wantGen++
	if a.cancelOp != nil {
		a.cancelOp()
	}
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Withdraw withdraws the UI Service for good (the Pod is terminating) and returns once the
// API server acknowledged it, or with the last failure when ctx ends first.
func (a *Agent) Withdraw(ctx context.Context, reason string) error {
	a.mu.Lock()
	if !a.final {
		a.final = true
		a.log.Info("withdrawing for good", "reason", reason)
		a.setWantLocked(desire{reason: reason})
	}
	gen := a.wantGen
	a.mu.Unlock()
	_, err := a.WaitFor(ctx, func(Status) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return !a.have.bound && a.haveGen >= gen
	})
	if err != nil {
		if e := a.Status().Err; e != "" {
			return fmt.Errorf("withdrawal not acknowledged: %s", e)
		}
		return fmt.Errorf("withdrawal not acknowledged: %w", err)
	}
	return nil
}

// Run runs until ctx is done (SIGTERM), then withdraws for good within shutdown and returns.
func (a *Agent) Run(ctx context.Context, shutdown time.Duration) error {
	inner, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a.reconcile(inner) }()
	go func() { defer wg.Done(); a.watch(inner) }()
	var srv *control.Server
	if a.cfg.Socket != "" {
		var err error
		srv, err = control.Listen(a.cfg.Socket, func(ctx context.Context) error { return a.Withdraw(ctx, "preStop request") })
		if err != nil {
			a.fatal(fmt.Sprintf("control socket %s: %v (the preStop hook cannot ask for the withdrawal; it still happens when the UI goes away)", a.cfg.Socket, err))
		} else {
			a.log.Info("listening for withdrawal requests", "socket", a.cfg.Socket)
		}
	}
	<-ctx.Done()
	wctx, cancel := context.WithTimeout(context.Background(), shutdown)
	err := a.Withdraw(wctx, "SIGTERM")
	cancel()
	if err != nil {
		a.fatal("on SIGTERM: " + err.Error())
	}
	stop()
	wg.Wait()
	if srv != nil {
		_ = srv.Close()
	}
	a.prober.CloseIdle()
	return err
}

// watch finds the UI and follows it.
func (a *Agent) watch(ctx context.Context) {
	t := time.NewTicker(a.cfg.Poll)
	defer t.Stop()
	var bound *discover.Socket
	first := true
	lastWaitLog := time.Now()
	tableErrLogged := false
	for {
		a.mu.Lock()
		final := a.final
		a.mu.Unlock()
		if final {
			return
		}
		if bound != nil {
			still, err := a.finder.Source().StillListening(*bound)
			if err != nil {
				// Cannot read the table: ask the UI itself (costs one request per poll).
				if !tableErrLogged {
					a.log.Warn("cannot read the socket table, watching over HTTP", "err", err)
					tableErrLogged = true
				}
				still = a.probeAny(ctx, *bound)
			}
			if !still {
				a.log.Info("UI lost: its socket is no longer listening", "socket", bound.String())
				a.finder.Forget(bound.Inode)
				bound = nil
				a.setWant(desire{reason: "UI lost"})
				lastWaitLog = time.Now()
			}
		}
		if bound == nil {
			sock, found, err := a.finder.Pass(ctx)
			switch {
			case err != nil:
				if !tableErrLogged || time.Since(lastWaitLog) > a.cfg.WaitLog {
					a.log.Error("cannot read the listening sockets", "err", err)
					tableErrLogged, lastWaitLog = true, time.Now()
				}
			case found:
				a.log.Info("UI found", "socket", sock.String(), "scheme", a.prober.Scheme())
				bound = &sock
				a.setWant(desire{bound: true, port: sock.Port, reason: "UI found"})
			default:
				if first {
					a.setWant(desire{reason: "no UI at start"})
				}
				if time.Since(lastWaitLog) >= a.cfg.WaitLog {
					a.log.Info("still waiting for the UI", "ports", a.portsDesc(), "seen", a.finder.Summary())
					lastWaitLog = time.Now()
				}
			}
			first = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Agent) probeAny(ctx context.Context, s discover.Socket) bool {
	for _, addr := range s.DialAddrs() {
		r := a.prober.Probe(ctx, addr)
		if r.Verdict == sparkapi.Match {
			return true
		}
		if !r.Unreachable() {
			return false
		}
	}
	return false
}

func (a *Agent) portsDesc() string {
	first, last := a.cfg.PortRange()
	if first == 0 {
		return "random (every listening socket)"
	}
	return fmt.Sprintf("%d-%d", first, last)
}

// reconcile makes the Service match want.
func (a *Agent) reconcile(ctx context.Context) {
	transient, fatalB := a.cfg.Backoff, a.cfg.FatalBackoff
	var (
		lastMsg    string
		lastLogged time.Time
		notFound   time.Time // first 404 of the current streak
		pub        publishing
	)
	for {
		select { // a kick from before this read is already accounted for
		case <-a.kick:
		default:
		}
		a.mu.Lock()
		want, gen, have, haveGen, unknown := a.want, a.wantGen, a.have, a.haveGen, a.unknown
		a.mu.Unlock()
		if gen != 0 && haveGen == gen && have.bound && a.uri != nil && (pub.gen != gen || !pub.finished) {
			// Bound, and the external URI of this binding not published yet.
			if pub.gen != gen {
				pub = publishing{gen: gen, poll: a.cfg.URIPoll, backoff: a.cfg.Backoff}
			}
			delay, finished := a.publishStep(ctx, &pub)
			if finished {
				pub.finished = true
				continue
			}
			if ctx.Err() != nil {
				return
			}
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			case <-a.kick:
				timer.Stop()
			}
			continue
		}
		if gen == 0 || haveGen == gen {
			select {
			case <-ctx.Done():
				return
			case <-a.kick:
				continue
			}
		}
		if want.same(have) && !unknown {
			a.applied(want, gen) // already so: nothing to write
			continue
		}
		opCtx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
		a.mu.Lock()
		if a.wantGen != gen { // changed meanwhile
			a.mu.Unlock()
			cancel()
			continue
		}
		a.cancelOp = cancel
		a.mu.Unlock()
		start := time.Now()
		var err error
		if want.bound {
			err = a.client.Bind(opCtx, want.port)
		} else {
			err = a.client.Withdraw(opCtx)
		}
		a.mu.Lock()
		a.cancelOp = nil
		superseded := a.wantGen != gen
		if err != nil {
			// A failed or cancelled write may still have been applied: whatever is wanted
			// next must be written, even if it equals what was last acknowledged.
			a.unknown = true
		}
		a.mu.Unlock()
		cancel()
		if err == nil {
			transient, fatalB = a.cfg.Backoff, a.cfg.FatalBackoff
			notFound, lastMsg = time.Time{}, ""
			took := time.Since(start).Round(time.Millisecond)
			if want.bound {
				a.log.Info("UI Service bound", "service", a.cfg.Service, "port", want.port, "selector", a.cfg.Selector,
					"reason", want.reason, "took", took)
			} else {
				a.log.Info("UI Service withdrawn", "service", a.cfg.Service, "selector", names.WithdrawnSelectorKey+"="+a.cfg.PodUID,
					"reason", want.reason, "took", took)
			}
			a.writeState(want)
			a.clearFatal()
			a.applied(want, gen)
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if superseded {
			continue // what is wanted changed: write the new state at once
		}
		var f *binder.Failure
		if !errors.As(err, &f) {
			f = &binder.Failure{Kind: binder.Transient, Message: err.Error(), Err: err}
		}
		var delay time.Duration
		msg := f.Message
		level := slog.LevelError
		switch f.Kind {
		case binder.Transient:
			delay = transient.Step()
			level = slog.LevelWarn
		case binder.NotFound:
			if notFound.IsZero() {
				notFound = time.Now()
			}
			if waited := time.Since(notFound); waited < a.cfg.ServiceWait {
				delay = transient.Step()
				msg += fmt.Sprintf(" (retrying for up to %s)", a.cfg.ServiceWait)
				level = slog.LevelWarn
			} else {
				delay = fatalB.Step()
				msg += fmt.Sprintf(" (still missing after %s; retrying)", waited.Round(time.Second))
				a.fatal(msg)
			}
		default:
			delay = fatalB.Step()
			a.fatal(msg)
		}
		a.setErr(msg)
		if msg != lastMsg || time.Since(lastLogged) >= a.cfg.WaitLog {
			a.log.Log(ctx, level, "API request failed", "kind", f.Kind.String(), "err", msg, "retry_in", delay.Round(time.Millisecond))
			lastMsg, lastLogged = msg, time.Now()
		} else {
			a.log.Debug("API request failed", "kind", f.Kind.String(), "retry_in", delay.Round(time.Millisecond))
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-a.kick: // what is wanted changed: try the new state now
			timer.Stop()
		}
	}
}

// publishing is the progress of publishing one binding's external URI.
type publishing struct {
	gen      uint64 // the binding (want generation)
	finished bool   // written, or given up until the next binding
	read     bool   // read the Service (GET) before resolving again
	poll     wait.Backoff
	backoff  wait.Backoff
	lastWait time.Time
	start    time.Time
}

// publishStep resolves the external URI from the Service as last seen (reading it again first
// when a load balancer's ingress was not there yet) and writes it. It returns when to try
// again, or finished: written, or given up until the next binding (no route can be resolved,
// or the Service is no longer bound to this driver).
func (a *Agent) publishStep(ctx context.Context, p *publishing) (retry time.Duration, finished bool) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	opCtx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	a.mu.Lock()
	if a.wantGen != p.gen {
		a.mu.Unlock()
		return 0, false // superseded: the loop writes the new state first
	}
	a.cancelOp = cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.cancelOp = nil
		a.mu.Unlock()
	}()

	view := a.client.View()
	if p.read || view == nil {
		var err error
		if view, err = a.client.Get(opCtx); err != nil {
			if ctx.Err() != nil || opCtx.Err() == context.Canceled {
				return 0, false
			}
			a.log.Warn("cannot read the UI Service to resolve its external URI", "err", err)
			return p.backoff.Step(), false
		}
		p.read = false
	}
	uri, done, err := a.uri.Resolve(opCtx, view, a.cfg.TLS)
	if err != nil {
		msg := fmt.Sprintf("external URI (--external-uri=%s) of Service %s/%s: %v; not published", a.cfg.ExternalURI, a.cfg.PodNamespace, a.cfg.Service, err)
		a.log.Error(msg)
		a.fatal(msg)
		return 0, true
	}
	if !done {
		p.read = true
		if time.Since(p.lastWait) >= a.cfg.WaitLog {
			a.log.Info("waiting for the load balancer's ingress to publish the external URI", "service", a.cfg.Service, "waited", time.Since(p.start).Round(time.Millisecond))
			p.lastWait = time.Now()
		}
		return p.poll.Step(), false
	}
	if view.URI() == uri {
		a.publishedURI(p.gen, uri)
		return 0, true // already there (written by a previous run of the container)
	}
	start := time.Now()
	err = a.client.Publish(opCtx, uri)
	if err == nil {
		a.log.Info("external URI published", "service", a.cfg.Service, "uri", uri, "annotation", names.AnnotationResolvedExternalURI,
			"took", time.Since(start).Round(time.Millisecond), "since_bound", time.Since(p.start).Round(time.Millisecond))
		a.publishedURI(p.gen, uri)
		return 0, true
	}
	if ctx.Err() != nil || opCtx.Err() == context.Canceled {
		return 0, false
	}
	var f *binder.Failure
	if errors.As(err, &f) && f.Kind == binder.NotOurs {
		a.log.Warn(f.Message)
		return 0, true
	}
	msg := err.Error()
	if errors.As(err, &f) && f.Fatal() {
		a.fatal(msg)
	}
	delay := p.backoff.Step()
	a.log.Warn("cannot publish the external URI", "err", msg, "retry_in", delay.Round(time.Millisecond))
	return delay, false
}

func (a *Agent) publishedURI(gen uint64, uri string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.haveGen != gen || !a.have.bound {
		return
	}
	a.status.URI = uri
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *Agent) applied(d desire, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.have = d
	a.haveGen = gen
	a.unknown = false
	a.status = Status{Bound: d.bound, Port: d.port, Final: a.final && !d.bound, At: time.Now()}
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *Agent) setErr(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status.Err = msg
	close(a.changed)
	a.changed = make(chan struct{})
}

// fatal records a reason a person must act on: error log and the termination log.
func (a *Agent) fatal(msg string) {
	a.mu.Lock()
	same := a.fatalMsg == msg
	a.fatalMsg = msg
	a.mu.Unlock()
	if same || a.cfg.TerminationLog == "" {
		return
	}
	if err := os.WriteFile(a.cfg.TerminationLog, []byte(msg+"\n"), 0o644); err != nil {
		a.log.Debug("cannot write the termination log", "path", a.cfg.TerminationLog, "err", err)
	}
}

// clearFatal empties the termination log once things work again.
func (a *Agent) clearFatal() {
	a.mu.Lock()
	had := a.fatalMsg != ""
	a.fatalMsg = ""
	a.mu.Unlock()
	if had && a.cfg.TerminationLog != "" {
		_ = os.WriteFile(a.cfg.TerminationLog, nil, 0o644)
	}
}

func (a *Agent) readState() int {
	if a.cfg.StateFile == "" {
		return 0
	}
	b, err := os.ReadFile(a.cfg.StateFile)
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || p <= 0 || p > 65535 {
		return 0
	}
	return p
}

func (a *Agent) writeState(d desire) {
	if a.cfg.StateFile == "" {
		return
	}
	if !d.bound {
		_ = os.Remove(a.cfg.StateFile)
		return
	}
	tmp := a.cfg.StateFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(d.port)+"\n"), 0o644); err == nil {
		_ = os.Rename(tmp, a.cfg.StateFile)
	}
}

// Install copies the running binary to dst (mode 0755, atomically: temp file and rename) so
// another container sharing the volume can run it. An identical copy is left alone.
func Install(dst string) error {
	src, err := os.Executable()
	if err != nil {
		return err
	}
	return installFile(src, dst)
}

func installFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if same, err := sameContent(in, dst); err != nil {
		return err
	} else if same {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// Streamed (copy_file_range where the kernel can): the binary never sits in the heap.
	if _, err := io.Copy(tmp, in); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// sameContent reports whether dst exists with mode 0755 and in's content; in is rewound.
func sameContent(in *os.File, dst string) (bool, error) {
	defer func() { _, _ = in.Seek(0, io.SeekStart) }()
	out, err := os.Open(dst)
	if err != nil {
		return false, nil
	}
	defer out.Close()
	si, err1 := in.Stat()
	so, err2 := out.Stat()
	if err1 != nil || err2 != nil || si.Size() != so.Size() || so.Mode().Perm() != 0o755 {
		return false, nil
	}
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errA := io.ReadFull(in, a)
		m, errB := io.ReadFull(out, b)
		if n != m || !bytes.Equal(a[:n], b[:m]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == errA, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, nil
		}
	}
}
