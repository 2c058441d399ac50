package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
)

// RedirectCommand runs the namespace's History Server redirector (docs/history.md).
const RedirectCommand = "redirect"

// DefaultHealthPort serves the redirector's /healthz and /readyz.
const DefaultHealthPort = 8081

type redirectSettings struct {
	namespace, kubeconfig, logFormat, logLevel string
	port, healthPort                           int
}

func parseRedirect(args []string, stderr io.Writer) (s redirectSettings, code int, ok bool) {
	fs := flag.NewFlagSet("sparkui-runtime redirect", flag.ContinueOnError)
	fs.StringVar(&s.namespace, "namespace", "", "the namespace whose UI Services are followed (default $"+sidecar.EnvPodNamespace+")")
	fs.IntVar(&s.port, "redirector-port", sidecar.DefaultRedirectorPort, "port of the redirects: the targetPort of handed-off UI Services (historyServer.redirectorPort)")
	fs.IntVar(&s.healthPort, "health-port", DefaultHealthPort, "port of "+redirect.LivePath+" and "+redirect.ReadyPath+" (a port of their own: any path on the redirect port may be one of Spark's)")
	fs.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else the in-cluster configuration)")
	fs.StringVar(&s.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if code, ok := cli.ParseGo(fs, redirectHelp, args, os.Stdout, stderr); !ok {
		return s, code, false
	}
	if err := envDefaults(fs); err != nil {
		fmt.Fprintf(stderr, "sparkui-runtime redirect: invalid environment: %v\n", err)
		return s, exitUsage, false
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
		return s, exitUsage, false
	}
	return s, exitOK, true
}

// redirectMain serves redirects until SIGTERM. It exits 1 when it cannot start (no API
// server configuration, a port taken).
func redirectMain(args []string, stderr io.Writer) int {
	s, code, ok := parseRedirect(args, stderr)
	if !ok {
		return code
	}
	log, err := newLogger(stderr, s.logFormat, s.logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-runtime redirect: "+err.Error())
		return exitUsage
	}
	restCfg, err := restConfig(s.kubeconfig)
	if err != nil {
		log.Error("no API server configuration", "err", err)
		return exitFailed
	}
	restCfg.UserAgent = "sparkui-runtime-redirect/" + version.Version
	w, err := redirect.NewWatcher(restCfg, s.namespace, log)
	if err != nil {
		log.Error("cannot make the API client", "err", err)
		return exitFailed
	}
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(s.port))
	if err != nil {
		log.Error("cannot listen for redirects", "err", err)
		return exitFailed
	}
	hln, err := net.Listen("tcp", ":"+strconv.Itoa(s.healthPort))
	if err != nil {
		_ = ln.Close()
		log.Error("cannot listen for health checks", "err", err)
		return exitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go w.Run(ctx)
	srv := &http.Server{Handler: redirect.Handler{Source: w}, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	hsrv := &http.Server{Handler: redirect.Health{Source: w}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { _ = hsrv.Serve(hln) }()
	log.Info("sparkui history redirector serving", "version", version.Version, "namespace", s.namespace,
		"redirector_port", s.port, "health_port", s.healthPort, "selector", redirect.Selector)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = hsrv.Shutdown(sctx)
	log.Info("stopped")
	return exitOK
}
