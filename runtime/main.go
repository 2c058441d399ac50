// Command sparkui-runtime is the companion that runs as a native sidecar in the Spark driver
// Pod and binds the UI Service to the port the UI really bound.
//
//	sparkui-runtime run --service=… --app-id=… [--ui-port=…] …   (the sidecar)
//	sparkui-runtime run --service=… --guard-label=… --selector=… --owner-reference=false …
//	                                                               (the sidecar, Service shared by runs)
//	sparkui-runtime withdraw [--socket=…] [--timeout=10s]          (the driver's preStop hook)
//	sparkui-runtime wait-uri --namespace=N --service=S [--timeout=5m]  (clients: print the external URI)
//	sparkui-runtime --version
//
// Every flag of run can also be given as an environment variable SPARKUI_<FLAG> (upper case,
// dashes as underscores, e.g. SPARKUI_POLL_INTERVAL); a flag on the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/runtime/control"
	"github.com/sparkui/sparkui/runtime/externaluri"
	"github.com/sparkui/sparkui/runtime/install"
)

// Exit codes.
const (
	// run exits 0 whatever happened (after SIGTERM), or with Go's 2 on a panic: see idle.
	exitOK          = 0
	exitFailed      = 1 // withdraw: not acknowledged in time; wait-uri: failed
	exitUsage       = 2 // unknown command; withdraw and wait-uri: bad arguments
	exitUnreachable = 3 // withdraw: no runtime listens on the socket
	exitWithdrawn   = 4 // wait-uri: the UI Service is withdrawn
	exitDeleted     = 5 // wait-uri: the UI Service was deleted
)

// WaitURICommand is the client command that prints the published external URI.
const WaitURICommand = "wait-uri"

func main() {
	os.Exit(Main(os.Args[1:], os.Stderr))
}

// Main runs the command line args and returns the exit code.
func Main(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Println("sparkui-runtime", version.Version)
		return exitOK
	case sidecar.RunCommand:
		return run(args[1:], stderr)
	case sidecar.WithdrawCommand:
		return withdraw(args[1:], stderr)
	case WaitURICommand:
		return waitURI(args[1:], os.Stdout, stderr)
	case "-h", "--help", "help":
		usage(stderr)
		return exitOK
	}
	fmt.Fprintf(stderr, "sparkui-runtime: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `sparkui-runtime %s: binds a Spark driver's UI Service to the port its UI really bound.

  sparkui-runtime run --service=NAME --app-id=ID [flags]   run as the driver Pod's sidecar
  sparkui-runtime run --service=NAME --guard-label=K=V --selector=K=V,… --owner-reference=false [flags]
                                                          the same, for a Service shared by successive runs
  sparkui-runtime withdraw [--socket=PATH] [--timeout=D]   ask the sidecar to withdraw (preStop hook)
  sparkui-runtime wait-uri --namespace=N --service=S [--timeout=D] [--kubeconfig=F]
                                                          wait for the UI's external URI and print it
  sparkui-runtime --version

Run "sparkui-runtime run -h" for the flags.
`, version.Version)
}

type runFlags struct {
	cfg             agent.Config
	logFormat       string
	logLevel        string
	kubeconfig      string
	install         string
	shutdownTimeout time.Duration
	version         bool
}

func newRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{}
	c := &f.cfg
	c.Config.Flags(fs)
	fs.DurationVar(&c.Poll, "poll-interval", 100*time.Millisecond, "how often the UI's socket is checked (no HTTP request while it keeps listening)")
	fs.DurationVar(&c.ProbeTimeout, "probe-timeout", time.Second, "timeout of one request to a candidate UI's REST API")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 5*time.Second, "timeout of one API server request")
	fs.DurationVar(&c.ServiceWait, "service-wait", 2*time.Minute, "how long a missing UI Service (404) is retried before it is reported as fatal (retries go on, slower)")
	fs.DurationVar(&c.WaitLog, "wait-log-interval", 30*time.Second, "how often \"still waiting\" and repeated failures are logged")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long to wait for the withdrawal's acknowledgement")
	fs.StringVar(&c.Socket, "socket", sidecar.SocketPath, "unix socket for withdrawal requests (\"\" = none)")
	fs.StringVar(&f.install, "install", sidecar.BinaryPath, "copy this binary there for the preStop hook (\"\" = don't)")
	fs.StringVar(&c.StateFile, "state-file", sidecar.StatePath, "remembers the bound port across container restarts (\"\" = none)")
	fs.StringVar(&c.TerminationLog, "termination-log", "/dev/termination-log", "file for the last fatal reason (\"\" = none)")
	fs.StringVar(&c.ProcRoot, "proc", "/proc", "procfs mount point (for --sockets=proc)")
	fs.StringVar(&c.Sockets, "sockets", "auto", "how listening sockets are read: netlink (sock_diag), proc (/proc/net/tcp*), or auto (netlink when available)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else the in-cluster configuration)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return f
}

// envDefaults sets every flag not given on the command line from SPARKUI_<FLAG>.
func envDefaults(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		env := "SPARKUI_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("$%s: %w", env, err))
			}
		}
	})
	return errors.Join(errs...)
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is neither text nor json", format)
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sparkui-runtime run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := newRunFlags(fs)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// Every configuration error below waits for SIGTERM and then exits 0 (see idle): the
	// sidecar must not exit while the driver runs, and never with a code > 0.
	fallback := slog.New(slog.NewTextHandler(stderr, nil))
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return idle(ctx, fallback, f.cfg.TerminationLog, "invalid arguments: "+err.Error())
	}
	if f.version {
		fmt.Println("sparkui-runtime", version.Version)
		return exitOK
	}
	if fs.NArg() > 0 {
		return idle(ctx, fallback, f.cfg.TerminationLog, fmt.Sprintf("invalid arguments: unexpected argument %q", fs.Arg(0)))
	}
	if err := envDefaults(fs); err != nil {
		return idle(ctx, fallback, f.cfg.TerminationLog, "invalid environment: "+err.Error())
	}
	log, err := newLogger(stderr, f.logFormat, f.logLevel)
	if err != nil {
		return idle(ctx, fallback, f.cfg.TerminationLog, "invalid arguments: "+err.Error())
	}
	cfg := f.cfg
	cfg.PodName = os.Getenv(sidecar.EnvPodName)
	cfg.PodNamespace = os.Getenv(sidecar.EnvPodNamespace)
	cfg.PodUID = os.Getenv(sidecar.EnvPodUID)
	cfg.Getenv = os.Getenv

	// The flag's default is 100ms, so a 0 here was asked for: Validate would take it for
	// "the default" and the log would say 0s.
	if err := agent.CheckPoll(cfg.Poll); err != nil {
		return idle(ctx, log, cfg.TerminationLog, "invalid configuration: "+err.Error())
	}
	if err := cfg.Validate(); err != nil {
		return idle(ctx, log, cfg.TerminationLog, "invalid configuration: "+err.Error())
	}
	log.Info("sparkui-runtime starting", "version", version.Version, "service", cfg.PodNamespace+"/"+cfg.Service, "app_id", cfg.AppID,
		"guard_label", cfg.GuardLabel, "selector", cfg.PodSelector, "owner_reference", !cfg.NoOwnerReference,
		"pod", cfg.PodName, "ui_port", cfg.UIPort, "max_retries", cfg.MaxRetries, "tls", cfg.TLS, "ssl_ui_port", cfg.SSLPort,
		"host_network", cfg.HostNetwork, "external_uri", cfg.ExternalURI, "poll", cfg.Poll, "skip_ports", cfg.SkipPorts,
		"ui_filters", cfg.UIFilters, "auth_bearer_file", cfg.AuthBearerFile, "auth_header_file", cfg.AuthHeaderFile)
	if f.install != "" {
		if err := install.Self(f.install); err != nil {
			log.Warn("cannot install the binary for the preStop hook; the withdrawal will follow the UI's end instead", "path", f.install, "err", err)
		} else {
			log.Info("installed the binary for the preStop hook", "path", f.install)
		}
	}
	restCfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return idle(ctx, log, cfg.TerminationLog, "no API server configuration: "+err.Error())
	}
	restCfg.UserAgent = "sparkui-runtime/" + version.Version
	a, err := agent.New(cfg, restCfg, log)
	if err != nil {
		return idle(ctx, log, cfg.TerminationLog, err.Error())
	}
	if err := a.Run(ctx, f.shutdownTimeout); err != nil {
		// The Pod is ending (SIGTERM comes after the driver exited, or on Pod deletion): the
		// endpoint controllers drop its address anyway. An exit code > 0 would only make the
		// Apache operator mark a successful application Failed (BaseAppDriverObserver:
		// any init container, native sidecars included, terminated with exit code > 0). The
		// reason is in the log and the termination log (Run wrote it).
		log.Error("stopped without the withdrawal's acknowledgement; exiting 0 all the same (the Pod is ending)", "err", err)
		return exitOK
	}
	log.Info("stopped")
	return exitOK
}

// idle reports a reason the runtime cannot work and waits for SIGTERM: exiting would only get
// the sidecar restarted in a loop. It then exits 0: nothing was bound, so nothing is left to
// withdraw, and an exit code > 0 from a native sidecar marks an Apache-operator application
// Failed (BaseAppDriverObserver.observeDriverTermination, isContainerFailed). The reason
// stays in the termination log, which the kubelet reports whatever the exit code.
func idle(ctx context.Context, log *slog.Logger, terminationLog, reason string) int {
	log.Error("cannot run; waiting for SIGTERM", "reason", reason)
	if terminationLog != "" {
		_ = os.WriteFile(terminationLog, []byte(reason+"\n"), 0o644)
	}
	<-ctx.Done()
	log.Info("stopped (nothing was bound)", "reason", reason)
	return exitOK
}

// restConfig: --kubeconfig, else $KUBECONFIG (like kubectl), else the in-cluster
// configuration (whose token file client-go re-reads), else ~/.kube/config.
func restConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	} else if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			return cfg, nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			return nil, err
		}
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
}

func withdraw(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sparkui-runtime withdraw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := sidecar.DefaultWithdraw()
	w.Flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 || w.Timeout <= 0 {
		fmt.Fprintln(stderr, "sparkui-runtime withdraw: takes only --socket and a positive --timeout")
		return exitUsage
	}
	start := time.Now()
	err := control.Withdraw(w.Socket, w.Timeout)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case err == nil:
		fmt.Fprintf(stderr, "sparkui-runtime withdraw: UI Service withdrawn (acknowledged by the API server in %s)\n", took)
		return exitOK
	case errors.Is(err, control.ErrUnreachable):
		fmt.Fprintf(stderr, "sparkui-runtime withdraw: %v (is the sparkui-runtime sidecar running?)\n", err)
		return exitUnreachable
	}
	fmt.Fprintf(stderr, "sparkui-runtime withdraw: after %s: %v\n", took, err)
	return exitFailed
}

// waitURI waits until the UI Service carries the resolved external URI while bound and prints
// it on stdout. It reads the Service with GET (capped exponential backoff with jitter: 200 ms
// doubling to 5 s), so it needs only `get` on that Service.
func waitURI(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sparkui-runtime wait-uri", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		ns, svc, kubeconfig string
		timeout, reqTimeout time.Duration
	)
	fs.StringVar(&ns, "namespace", "", "the UI Service's namespace (default: the kubeconfig context's)")
	fs.StringVar(&svc, "service", "", "the UI Service (required)")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "give up (exit 1) after this long")
	fs.DurationVar(&reqTimeout, "request-timeout", 10*time.Second, "timeout of one API server request")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else the in-cluster configuration, else ~/.kube/config)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 || svc == "" || timeout <= 0 {
		fmt.Fprintln(stderr, "sparkui-runtime wait-uri: takes --service (required), --namespace, a positive --timeout, --request-timeout and --kubeconfig")
		return exitUsage
	}
	if ns == "" {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if kubeconfig != "" {
			rules.ExplicitPath = kubeconfig
		}
		n, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
		if err != nil || n == "" {
			n = "default"
		}
		ns = n
	}
	restCfg, err := restConfig(kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: no API server configuration: %v\n", err)
		return exitFailed
	}
	restCfg.UserAgent = "sparkui-runtime-wait-uri/" + version.Version
	restCfg.Timeout = reqTimeout
	c, err := binder.NewClient(restCfg, binder.Target{Namespace: ns, Service: svc})
	if err != nil {
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %v\n", err)
		return exitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var denied error
	get := func(ctx context.Context) (*externaluri.Service, bool, error) {
		s, err := c.Get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return nil, false, nil
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			denied = err
			cancel()
		}
		return s, err == nil, err
	}
	uri, err := externaluri.Wait(ctx, get, wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 5 * time.Second})
	where := fmt.Sprintf("Service %s/%s", ns, svc)
	switch {
	case err == nil:
		fmt.Fprintln(stdout, uri)
		return exitOK
	case denied != nil:
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v (wait-uri needs get on that Service)\n", where, denied)
		return exitFailed
	case errors.Is(err, externaluri.ErrWithdrawn):
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", where, err)
		return exitWithdrawn
	case errors.Is(err, externaluri.ErrDeleted):
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", where, err)
		return exitDeleted
	case errors.Is(err, externaluri.ErrTimeout):
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: no external URI after %s: %v\n", where, timeout, err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", where, err)
	return exitFailed
}
