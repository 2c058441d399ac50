// Package redirectcmd is `sparkui-runtime redirect`: the namespace's History Server redirector
// (the serving itself is package runtime/redirect).
package redirectcmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/redirect"
	"github.com/sparkui/sparkui/runtime/verb"
)

// Command runs the namespace's History Server redirector (docs/history.md).
const Command = "redirect"

// DefaultHealthPort serves the redirector's /healthz and /readyz.
const DefaultHealthPort = 8081

// Limits of the redirect port. A redirect request is a request line and a few headers, and no
// answer needs a body; the limits keep the memory of the example's Deployment (64Mi) out of
// reach of a client that opens many connections or sends slowly (docs/history.md measures).
const (
	// redirectMaxHeaderBytes bounds a request's header (net/http reads up to 4 KiB more).
	redirectMaxHeaderBytes = 32 << 10
	redirectHeaderTimeout  = 5 * time.Second
	// redirectReadTimeout also bounds what net/http reads of an unwanted body after the answer.
	redirectReadTimeout  = 10 * time.Second
	redirectWriteTimeout = 10 * time.Second
	redirectIdleTimeout  = 30 * time.Second
	// DefaultMaxConnections is the default of --max-connections: with a 32 KiB header bound a
	// connection costs ~100 KiB at most (measured by TestRedirectorUnderAbuse: 256 connections
	// each holding 30 KiB of an unfinished header took RSS from 12 to 38 MiB, and no flood
	// peaked above 45 MiB with GOMEMLIMIT=32MiB). Beyond the limit new connections wait in the
	// kernel's backlog (redirect.Limiter).
	DefaultMaxConnections = 256
)

type redirectSettings struct {
	namespace, kubeconfig, logFormat, logLevel, historyURL string
	port, healthPort, maxConns                             int
}

func parseRedirect(args []string, stderr io.Writer) (s redirectSettings, code int, ok bool) {
	fs := flag.NewFlagSet("sparkui-runtime redirect", flag.ContinueOnError)
	fs.StringVar(&s.namespace, "namespace", "", "the namespace whose UI Services are followed (default $"+sidecar.EnvPodNamespace+")")
	fs.IntVar(&s.port, "redirector-port", sidecar.DefaultRedirectorPort, "port of the redirects: the targetPort of handed-off UI Services (historyServer.redirectorPort)")
	fs.IntVar(&s.healthPort, "health-port", DefaultHealthPort, "port of "+redirect.LivePath+" and "+redirect.ReadyPath+" (a port of their own: any path on the redirect port may be one of Spark's)")
	fs.StringVar(&s.historyURL, "history-url", "", "the History Server's URL: every redirect is <url>/history/<app id>/ (equal to the functionConfig's historyServer.url; required)")
	fs.IntVar(&s.maxConns, "max-connections", DefaultMaxConnections, "connections served at once on the redirect port; more wait in the kernel's backlog (size it to the memory limit: ~100 KiB each)")
	fs.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else the in-cluster configuration)")
	fs.StringVar(&s.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if code, ok := cli.ParseGo(fs, Help, args, os.Stdout, stderr); !ok {
		return s, code, false
	}
	if err := verb.EnvDefaults(fs); err != nil {
		fmt.Fprintf(stderr, "sparkui-runtime redirect: invalid environment: %v\n", err)
		return s, verb.ExitUsage, false
	}
	if s.namespace == "" {
		s.namespace = os.Getenv(sidecar.EnvPodNamespace)
	}
	var errs []string
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if s.namespace == "" {
		errs = append(errs, "--namespace (or $"+sidecar.EnvPodNamespace+" from the downward API) is required")
	}
	if s.historyURL == "" {
		errs = append(errs, "--history-url (or $"+sidecar.EnvHistoryURL+") is required: the redirector sends users only to its own History Server")
	} else if err := sidecar.CheckHistoryURL(s.historyURL); err != nil {
		errs = append(errs, "--history-url: "+err.Error())
	}
	if s.maxConns < 1 {
		errs = append(errs, fmt.Sprintf("--max-connections: %d is not a positive number", s.maxConns))
	}
	for _, p := range []struct {
		flag string
		v    int
	}{{"--redirector-port", s.port}, {"--health-port", s.healthPort}} {
		if err := sidecar.CheckRedirectorPort(p.v); err != nil {
			errs = append(errs, p.flag+": "+err.Error())
		}
	}
	if s.port == s.healthPort {
		errs = append(errs, "--redirector-port and --health-port must differ")
	}
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(stderr, "sparkui-runtime redirect: "+e)
		}
		return s, verb.ExitUsage, false
	}
	return s, verb.ExitOK, true
}

// Main serves redirects until SIGTERM. It exits 1 when it cannot start (no API
// server configuration, a port taken).
func Main(args []string, stderr io.Writer) int {
	s, code, ok := parseRedirect(args, stderr)
	if !ok {
		return code
	}
	log, err := verb.NewLogger(stderr, s.logFormat, s.logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-runtime redirect: "+err.Error())
		return verb.ExitUsage
	}
	restCfg, err := verb.RestConfig(s.kubeconfig)
	if err != nil {
		log.Error("no API server configuration", "err", err)
		return verb.ExitFailed
	}
	restCfg.UserAgent = "sparkui-runtime-redirect/" + version.Version
	w, err := redirect.NewWatcher(restCfg, s.namespace, log)
	if err != nil {
		log.Error("cannot make the API client", "err", err)
		return verb.ExitFailed
	}
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(s.port))
	if err != nil {
		log.Error("cannot listen for redirects", "err", err)
		return verb.ExitFailed
	}
	hln, err := net.Listen("tcp", ":"+strconv.Itoa(s.healthPort))
	if err != nil {
		_ = ln.Close()
		log.Error("cannot listen for health checks", "err", err)
		return verb.ExitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go w.Run(ctx)
	// The health port is the kubelet's: a handful of connections. It has its own small limit
	// so that a flood of the redirect port does not fail the probes, nor the reverse.
	lim, hlim := redirect.NewLimiter(ln, s.maxConns), redirect.NewLimiter(hln, 16)
	srv := &http.Server{Handler: redirect.Handler{Source: w, HistoryURL: s.historyURL}, ConnState: lim.ConnState,
		MaxHeaderBytes: redirectMaxHeaderBytes, ReadHeaderTimeout: redirectHeaderTimeout, ReadTimeout: redirectReadTimeout,
		WriteTimeout: redirectWriteTimeout, IdleTimeout: redirectIdleTimeout, ErrorLog: discardLog}
	hsrv := &http.Server{Handler: redirect.Health{Source: w}, ConnState: hlim.ConnState, MaxHeaderBytes: redirectMaxHeaderBytes,
		ReadHeaderTimeout: redirectHeaderTimeout, ReadTimeout: redirectReadTimeout, WriteTimeout: redirectWriteTimeout,
		IdleTimeout: redirectIdleTimeout, ErrorLog: discardLog}
	ln, hln = lim, hlim
	go func() { _ = srv.Serve(ln) }()
	go func() { _ = hsrv.Serve(hln) }()
	log.Info("sparkui history redirector serving", "version", version.Version, "namespace", s.namespace,
		"redirector_port", s.port, "health_port", s.healthPort, "selector", redirect.Selector, "history_url", s.historyURL, "max_connections", s.maxConns)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = hsrv.Shutdown(sctx)
	log.Info("stopped")
	return verb.ExitOK
}

// discardLog drops net/http's own per-connection messages (TLS handshake errors, "too many
// open files" retries, header-too-large): a flood would otherwise turn into a log flood.
var discardLog = log.New(io.Discard, "", 0)

// Help is `sparkui-runtime redirect --help` and its section of docs/cli.md.
var Help = cli.Command{
	Path:  "sparkui-runtime redirect",
	Short: "the namespace's History Server redirector: sends users of a handed-off UI Service to its History Server page",
	Usage: []string{"sparkui-runtime redirect [--namespace=NS] [--redirector-port=PORT] [--health-port=PORT] [--kubeconfig=FILE]"},
	Long: `Every flag can also be given as $SPARKUI_<FLAG>, as for run. It takes where it may send users
from its own configuration, never from what a driver wrote on its Service.`,
	Examples: []string{
		"sparkui-runtime redirect --namespace=spark-jobs",
	},
	Exit: []cli.Exit{
		{Code: verb.ExitOK, Meaning: "stopped by SIGTERM"},
		{Code: verb.ExitFailed, Meaning: "could not serve"},
		{Code: verb.ExitUsage, Meaning: "bad arguments or environment"},
	},
	See: "docs/history.md",
}
