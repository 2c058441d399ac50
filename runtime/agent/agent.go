// Package agent is the runtime's life: a watcher finds the UI and notices when it goes away,
// a reconciler makes the UI Service match (one guarded PATCH per change, retried with capped,
// jittered exponential backoff), and withdrawal requests (preStop, SIGTERM) end it.
//
// Files: config.go (settings), agent.go (the agent and what is wanted), watch.go (finding
// and following the UI), reconcile.go (writing the Service), publish.go (the external URI),
// state.go (status, termination log, state file).
package agent

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/runtime/control"
	"github.com/sparkui/sparkui/runtime/discover"
	"github.com/sparkui/sparkui/runtime/events"
	"github.com/sparkui/sparkui/runtime/externaluri"
	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// Status is the UI Service's state as last acknowledged by the API server.
type Status struct {
	Bound bool
	Port  int
	Final bool      // withdrawn for good (preStop or SIGTERM)
	At    time.Time // when the API server acknowledged it
	Err   string    // the last failure since, if any
	URI   string    // the external URI the runtime published for this binding (nodePort, loadBalancer)
	// HistoryURI is the History Server page the last withdrawal handed the Service off with
	// ("" when it was the plain withdrawal).
	HistoryURI string
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
	events *events.Recorder     // nil: --events=false (events.go)

	mu       sync.Mutex
	want     desire
	wantGen  uint64
	final    bool
	finalBy  time.Time // when the withdrawal for good is waited for until; zero = no deadline
	have     desire
	haveGen  uint64
	unknown  bool // the last write failed: the Service's state is not known
	status   Status
	changed  chan struct{} // closed and replaced whenever status changes
	kick     chan struct{}
	cancelOp context.CancelFunc // cancels the request in flight when want changes
	fatalMsg string
	reason   Reason // why the UI is not bound (state.go)
	// verifiedID is the application id the UI this process found reported (sparkapi Match).
	verifiedID string
	said       map[string]bool // messages logged once
	start      time.Time       // when this process began waiting: the waiting state's ui-since
	everBound  bool            // this process, or an earlier run of its container, bound the Service
	// verdictReason is the Event reason of the last verdict that keeps the UI unbound (events.go).
	verdictReason string
}

// New prepares an agent; restCfg is the API server's configuration.
func New(checked Checked, restCfg *rest.Config, log *slog.Logger) (*Agent, error) {
	cfg := checked.c
	table, err := discover.Open(cfg.Sockets, cfg.ProcRoot)
	if err != nil {
		return nil, err
	}
	log.Info("listening sockets read through "+table.Name(), "source", table.Name())
	rc := rest.CopyConfig(restCfg)
	rc.Timeout = cfg.RequestTimeout
	target := binder.Target{
		Namespace: cfg.PodNamespace, Service: cfg.Service, AppID: cfg.AppID, PortName: cfg.PortName(),
		PodName: cfg.PodName, PodUID: cfg.PodUID, Selector: cfg.Selector, Role: cfg.Role, NoOwner: cfg.NoOwnerReference,
	}
	if cfg.GuardLabel != "" {
		target.GuardKey, target.GuardValue, _ = sidecar.ParseLabel(cfg.GuardLabel) // checked by Validate
	}
	client, err := binder.NewClient(rc, target)
	if err != nil {
		return nil, err
	}
	resolver, err := externaluri.New(cfg.ExternalURI, externaluri.Env{Getenv: cfg.Getenv})
	if err != nil {
		return nil, err
	}
	prober := sparkapi.NewProber(sparkapi.Identity{AppID: cfg.AppID, PodName: cfg.PodName, Namespace: cfg.PodNamespace, HostNetwork: cfg.HostNetwork},
		cfg.TLS, cfg.ProbeTimeout)
	prober.Filters = cfg.UIFilters
	switch {
	case cfg.AuthBearerFile != "":
		prober.Cred = sparkapi.BearerFile(cfg.AuthBearerFile)
	case cfg.AuthHeaderFile != "":
		prober.Cred = sparkapi.HeaderFile(cfg.AuthHeaderFile)
	}
	skip, _ := sidecar.ParsePorts(cfg.SkipPorts) // checked by Validate
	a := &Agent{
		cfg:     cfg,
		log:     log,
		client:  client,
		prober:  prober,
		uri:     resolver,
		said:    map[string]bool{},
		start:   time.Now(),
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
	}
	if a.events, err = newEvents(cfg, restCfg, log); err != nil {
		return nil, err
	}
	a.finder = discover.NewFinder(table, prober, discover.Options{Ports: cfg.Ports(), Skip: skip, Wait: cfg.Poll * 8 / 10, OnVerdict: a.onVerdict})
	// A previous run of this container may have bound the Service: start from what it
	// recorded, so that a UI gone meanwhile is withdrawn at the first pass.
	if p := a.readState(); p > 0 {
		a.have = desire{bound: true, port: p}
		a.want = a.have
		a.status = Status{Bound: true, Port: p}
		a.everBound = true
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
	if d, ok := ctx.Deadline(); ok {
		a.finalBy = d // the latest asker's: an earlier one (preStop) has stopped waiting
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
		srv, err = control.Listen(a.cfg.Socket, func(ctx context.Context) error { return a.notAcknowledged(a.Withdraw(ctx, "preStop request")) })
		if err != nil {
			a.fatal(fmt.Sprintf("control socket %s: %v (the preStop hook cannot ask for the withdrawal; it still happens when the UI goes away)", a.cfg.Socket, err))
		} else {
			a.log.Info("listening for withdrawal requests", "socket", a.cfg.Socket)
		}
	}
	<-ctx.Done()
	wctx, cancel := context.WithTimeout(context.Background(), shutdown)
	err := a.notAcknowledged(a.Withdraw(wctx, "SIGTERM"))
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
	a.events.Shutdown(eventsFlush)
	return err
}
