// Command sparkui-runtime is the companion that runs as a native sidecar in the Spark driver
// Pod and binds the UI Service to the port the UI really bound.
//
//	sparkui-runtime run --service=… --app-id=… [--ui-port=…] …   (the sidecar)
//	sparkui-runtime run --service=… --guard-label=… --selector=… --owner-reference=false …
//	                                                               (the sidecar, Service shared by runs)
//	sparkui-runtime withdraw [--socket=…] [--timeout=10s]          (the driver's preStop hook)
//	sparkui-runtime wait-uri --namespace=N --service=S [--timeout=5m]  (clients: print the external URI)
//	sparkui-runtime redirect [--namespace=N] [--redirector-port=8080] [--health-port=8081]
//	                                                               (the namespace's History Server redirector)
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
	"syscall"
	"time"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/control"
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
	exitHandedOff   = 6 // wait-uri: the UI Service is handed off to the History Server (its page on stdout)
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stderr))
}

// Main runs the command line args and returns the exit code.
func Main(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, rootHelp.Render(rootFlags))
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
	case RedirectCommand:
		return redirectMain(args[1:], stderr)
	case "-h", "--help", "-help", "help":
		fmt.Fprint(os.Stdout, rootHelp.Render(rootFlags))
		return exitOK
	}
	fmt.Fprintf(stderr, "sparkui-runtime: unknown command %q (--help lists the commands)\n", args[0])
	return exitUsage
}

// rootFlags are the flags of sparkui-runtime without a command.
var rootFlags = []cli.Flag{{Name: "version", Usage: "print the version and exit 0"}, cli.HelpFlag}

// run is the sidecar: it reads its settings once, then runs the agent until SIGTERM.
func run(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := loadRun(args, stderr)
	var bad *badSettings
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(os.Stdout, runHelp.Render(cli.GoFlags(newRunFlagSet())))
		return exitOK
	case errors.Is(err, errVersion):
		fmt.Println("sparkui-runtime", version.Version)
		return exitOK
	case errors.As(err, &bad):
		// A configuration error waits for SIGTERM and then exits 0 (see idle): the sidecar
		// must not exit while the driver runs, and never with a code > 0.
		return idle(ctx, bad.log, bad.terminationLog, bad.reason)
	}
	cfg, log := s.cfg.Config(), s.log
	log.Info("sparkui-runtime starting", "version", version.Version, "service", cfg.PodNamespace+"/"+cfg.Service, "app_id", cfg.AppID,
		"guard_label", cfg.GuardLabel, "selector", cfg.PodSelector, "owner_reference", !cfg.NoOwnerReference,
		"pod", cfg.PodName, "ui_port", cfg.UIPort, "max_retries", cfg.MaxRetries, "tls", cfg.TLS, "ssl_ui_port", cfg.SSLPort,
		"host_network", cfg.HostNetwork, "external_uri", cfg.ExternalURI, "poll", cfg.Poll, "skip_ports", cfg.SkipPorts,
		"ui_filters", cfg.UIFilters, "auth_bearer_file", cfg.AuthBearerFile, "auth_header_file", cfg.AuthHeaderFile,
		"history_url", cfg.HistoryURL, "redirector_port", cfg.RedirectorPort)
	installSelf(log, s.install)
	restCfg, err := restConfig(s.kubeconfig)
	if err != nil {
		return idle(ctx, log, cfg.TerminationLog, "no API server configuration: "+err.Error())
	}
	restCfg.UserAgent = "sparkui-runtime/" + version.Version
	a, err := agent.New(s.cfg, restCfg, log)
	if err != nil {
		return idle(ctx, log, cfg.TerminationLog, err.Error())
	}
	if err := a.Run(ctx, s.shutdownTimeout); err != nil {
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

// installSelf copies the binary for the preStop hook (path "" = don't); without it the
// withdrawal still follows the UI's end.
func installSelf(log *slog.Logger, path string) {
	if path == "" {
		return
	}
	if err := install.Self(path); err != nil {
		log.Warn("cannot install the binary for the preStop hook; the withdrawal will follow the UI's end instead", "path", path, "err", err)
		return
	}
	log.Info("installed the binary for the preStop hook", "path", path)
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

func withdraw(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sparkui-runtime withdraw", flag.ContinueOnError)
	w := sidecar.DefaultWithdraw()
	w.Flags(fs)
	if code, ok := cli.ParseGo(fs, withdrawHelp, args, os.Stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 || w.Timeout <= 0 {
		fmt.Fprintln(stderr, "sparkui-runtime withdraw: takes only --socket and a positive --timeout"+cli.HelpHint)
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
