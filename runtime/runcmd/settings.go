package runcmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/verb"
)

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
	fs.StringVar(&c.HistoryURL, "history-url", "", "the History Server's URL: a withdrawal after a verified bind hands the UI Service off to the redirector, publishing <url>/history/<app id>/ (\"\" = plain withdrawal)")
	fs.IntVar(&c.RedirectorPort, "redirector-port", sidecar.DefaultRedirectorPort, "the port of the namespace's History Server redirector (with --history-url)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else the in-cluster configuration)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return f
}

// newRunFlagSet is run's flags, for its help.
func newRunFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("sparkui-runtime run", flag.ContinueOnError)
	newRunFlags(fs)
	return fs
}

// runSettings is run's whole configuration: the command line, then $SPARKUI_<FLAG>, then the
// downward API's environment, validated.
type runSettings struct {
	cfg             agent.Checked
	log             *slog.Logger
	kubeconfig      string
	install         string
	shutdownTimeout time.Duration
	// skew is what the runtime ignored: settings of a newer contract it may safely ignore.
	skew verb.Skew
}

// errVersion asks run to print the version and exit.
var errVersion = errors.New("--version")

// badSettings is why run cannot work, told with the logger and termination log known so far.
type badSettings struct {
	log            *slog.Logger
	terminationLog string
	reason         string
	// kubeconfig, service and noEvents, as far as they were read: for the ConfigError Event.
	kubeconfig, service string
	noEvents            bool
}

func (b *badSettings) Error() string { return b.reason }

// loadRun is the one place run's settings are read and validated. Its error is flag.ErrHelp,
// errVersion or a *badSettings.
func loadRun(args []string, stderr io.Writer) (*runSettings, error) {
	fs := flag.NewFlagSet("sparkui-runtime run", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the help is printed by run, a bad flag is a badSettings
	fs.Usage = func() {}
	f := newRunFlags(fs)
	fallback := slog.New(slog.NewTextHandler(stderr, nil))
	bad := func(log *slog.Logger, reason string) error {
		return &badSettings{log: log, terminationLog: f.cfg.TerminationLog, reason: reason, kubeconfig: f.kubeconfig, service: f.cfg.Service, noEvents: f.cfg.NoEvents}
	}
	// Settings of a newer runtime contract are taken out before parsing: the flag package
	// refuses an unknown flag, and a refusal leaves the application without its UI.
	args, skew := verb.SplitFlags(fs, args)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, bad(fallback, "invalid arguments: "+cli.FlagError(err))
	}
	if f.version {
		return nil, errVersion
	}
	if fs.NArg() > 0 {
		return nil, bad(fallback, fmt.Sprintf("invalid arguments: unexpected argument %q", fs.Arg(0)))
	}
	if err := verb.EnvDefaults(fs); err != nil {
		return nil, bad(fallback, "invalid environment: "+err.Error())
	}
	log, err := verb.NewLogger(stderr, f.logFormat, f.logLevel)
	if err != nil {
		return nil, bad(fallback, "invalid arguments: "+err.Error())
	}
	skew = verb.UnknownEnv(skew, fs, os.Environ(), sidecar.EnvRunLabel)
	if len(skew.Required) > 0 {
		return nil, bad(log, refusal(skew))
	}
	cfg := f.cfg
	cfg.PodName = os.Getenv(sidecar.EnvPodName)
	cfg.PodNamespace = os.Getenv(sidecar.EnvPodNamespace)
	cfg.PodUID = os.Getenv(sidecar.EnvPodUID)
	cfg.Getenv = os.Getenv
	// The flag's default is 100ms, so a 0 here was asked for: Validate would take it for
	// "the default" and the log would say 0s.
	if err := agent.CheckPoll(cfg.Poll); err != nil {
		return nil, bad(log, "invalid configuration: "+err.Error())
	}
	cfg.TerminationNotice = notice(skew)
	checked, err := cfg.Check()
	if err != nil {
		return nil, bad(log, "invalid configuration: "+err.Error())
	}
	return &runSettings{cfg: checked, log: log, kubeconfig: f.kubeconfig, install: f.install, shutdownTimeout: f.shutdownTimeout, skew: skew}, nil
}
