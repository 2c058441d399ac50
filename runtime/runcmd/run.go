// Package runcmd is `sparkui-runtime run`: the driver Pod's native sidecar. It reads its
// settings once (settings.go), then runs the agent (runtime/agent) until SIGTERM.
package runcmd

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

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/install"
	"github.com/sparkui/sparkui/runtime/verb"
)

// Main is `sparkui-runtime run`, the sidecar: it reads its settings once, then runs the agent until SIGTERM.
func Main(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := loadRun(args, stderr)
	var bad *badSettings
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(os.Stdout, Help.Render(cli.GoFlags(newRunFlagSet())))
		return verb.ExitOK
	case errors.Is(err, errVersion):
		fmt.Println("sparkui-runtime", version.Version)
		return verb.ExitOK
	case errors.As(err, &bad):
		// A configuration error waits for SIGTERM and then exits 0 (see idle): the sidecar
		// must not exit while the driver runs, and never with a code > 0.
		defer configErrorEvent(bad.log, bad.kubeconfig, bad.service, bad.noEvents, bad.reason)()
		return idle(ctx, bad.log, bad.terminationLog, bad.reason)
	}
	cfg, log := s.cfg.Config(), s.log
	log.Info("sparkui-runtime starting", "version", version.Version, "runtime_contract", version.RuntimeContract, "service", cfg.PodNamespace+"/"+cfg.Service, "app_id", cfg.AppID,
		"guard_label", cfg.GuardLabel, "selector", cfg.PodSelector, "owner_reference", !cfg.NoOwnerReference,
		"pod", cfg.PodName, "ui_port", cfg.UIPort, "max_retries", cfg.MaxRetries, "tls", cfg.TLS, "ssl_ui_port", cfg.SSLPort,
		"host_network", cfg.HostNetwork, "external_uri", cfg.ExternalURI, "poll", cfg.Poll, "skip_ports", cfg.SkipPorts,
		"ui_filters", cfg.UIFilters, "auth_bearer_file", cfg.AuthBearerFile, "auth_header_file", cfg.AuthHeaderFile,
		"history_url", cfg.HistoryURL, "redirector_port", cfg.RedirectorPort)
	reportSkew(log, cfg.TerminationLog, s.skew)
	installSelf(log, s.install)
	restCfg, err := verb.RestConfig(s.kubeconfig)
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
		return verb.ExitOK
	}
	log.Info("stopped")
	return verb.ExitOK
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
	return verb.ExitOK
}

// Help is `sparkui-runtime run --help` and its section of docs/cli.md.
var Help = cli.Command{
	Path:  "sparkui-runtime run",
	Short: "the driver Pod's native sidecar: bind the UI Service to the live UI, withdraw it when the UI goes",
	Usage: []string{"sparkui-runtime run --service=NAME --app-id=ID [flags]"},
	Long: `Every flag can also be given as $SPARKUI_<FLAG> (upper case, dashes as underscores, e.g.
SPARKUI_POLL_INTERVAL); a flag on the command line wins. The Pod's identity comes from the
downward API: $POD_NAME, $POD_NAMESPACE, $POD_UID (and $HOST_IP for --external-uri=nodePort).
A configuration error is logged and written to the termination log, and the sidecar then
waits for SIGTERM instead of exiting into a restart loop. A flag or $SPARKUI_* variable of a
newer runtime contract is ignored, logged and written to the termination log, and the UI
Service is still bound; an unknown --require-* or $SPARKUI_REQUIRE_* one is refused instead
(docs/runtime-contract.md).`,
	Examples: []string{
		"sparkui-runtime run --service=spark-pi-sparkui-ui-svc --guard-label=sparkui.dev/application=spark-pi \\",
		"    --selector=sparkui.dev/application=spark-pi,spark-role=driver --owner-reference=false --ui-port=4045",
	},
	Exit: []cli.Exit{
		{Code: verb.ExitOK, Meaning: "after SIGTERM, in every case (withdrawn, nothing to withdraw, not acknowledged in time, a configuration error): an exit code > 0 of a native sidecar marks an Apache-operator application Failed"},
	},
	See: "docs/runtime.md, runtime/README.md",
}
