// Package sidecar is the interface between the KRM function and the runtime: the names of the
// container, volume and hook it wires into the driver Pod, and the runtime's settings as
// command-line arguments. The function writes them, the runtime parses them, validation reads
// them back; all three go through this package so they cannot drift.
package sidecar

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sparkui/sparkui/internal/names"
)

const (
	ContainerName = "sparkui-runtime"
	VolumeName    = "sparkui-runtime"
	// MountPath is a shared emptyDir: the runtime copies its own binary there at start so the
	// driver container's preStop hook can run it whatever the Spark image contains, and
	// listens on a unix socket there for that hook's withdrawal request.
	MountPath  = "/opt/sparkui"
	BinaryPath = MountPath + "/sparkui-runtime"
	SocketPath = MountPath + "/runtime.sock"
	// StatePath is where the runtime remembers the port it bound, so that after a restart of
	// its container it withdraws a binding whose UI went away meanwhile.
	StatePath = MountPath + "/bound-port"

	RunCommand      = "run"
	WithdrawCommand = "withdraw"
	// WithdrawTimeout bounds the preStop hook; well inside the default 30 s grace period.
	WithdrawTimeout = 10 * time.Second

	// User is the runtime's numeric non-root user and group.
	User = 65532

	EnvPodName      = "POD_NAME"
	EnvPodNamespace = "POD_NAMESPACE"
	EnvPodUID       = "POD_UID"
	// EnvHostIP is the node's address (downward API status.hostIP), for nodePort URIs.
	EnvHostIP = "HOST_IP"
	// EnvAppID carries the runtime's own Pod's app-id label value (downward API fieldRef
	// metadata.labels['<Config.AppIDLabel>']) when --app-id-from-label is given. The kubelet
	// resolves it when the container starts; a label the Pod lacks gives "".
	EnvAppID = "SPARKUI_APP_ID"
)

// Config is what the runtime needs to know about its application.
type Config struct {
	Service     string // the UI Service to bind
	AppID       string // value of the Service's spark-app-selector label and Spark's app id
	UIPort      int    // spark.ui.port; 0 = random
	MaxRetries  int    // spark.port.maxRetries
	TLS         bool
	SSLPort     int // first HTTPS port when TLS is on; 0 = random
	HostNetwork bool
	// Role is the Role that grants the runtime its access, named in RBAC failure messages;
	// empty when it is the default <service without -ui-svc>-ui-svc-binder.
	Role string
	// ExternalURI is how the runtime publishes the UI's external URI after binding: "" (or
	// none/annotation: someone else resolves it), nodePort or loadBalancer.
	ExternalURI string

	// SkipPorts are ports the runtime never probes, comma-separated ("7078,7079"): the
	// driver's RPC and block-manager ports (spark.driver.port, spark.blockManager.port /
	// spark.driver.blockManager.port). An HTTP request there makes the driver log a "Too large
	// frame" stack trace (common/network-common TransportFrameDecoder). Empty: none skipped.
	SkipPorts string
	// UIFilters is spark.ui.filters as configured (comma-separated class names), named in the
	// runtime's message when the UI refuses its probes (401/403/302); empty when not set.
	UIFilters string
	// AuthBearerFile is a mounted file holding a bearer token (e.g. a JWS for Spark's
	// org.apache.spark.ui.JWSFilter): probes send "Authorization: Bearer <file content>".
	AuthBearerFile string
	// AuthHeaderFile is a mounted file holding one HTTP header line "Name: value" that probes
	// send (any other filter's credential: a cookie, a basic-auth Authorization, an API key).
	// Both files are read again when they change (Secret rotation).
	AuthHeaderFile string

	// AppIDLabel (--app-id-from-label=<label key>) is set instead of AppID for applications
	// whose Spark app id is unknown at build time: operator resources (kubeflow's
	// spark-app-selector is spark-<uuid>, random per run; Apache's is <name>-<attempt>, which
	// changes with every attempt). The runtime then takes the app id from env EnvAppID, which
	// the function fills from the Pod's own label of that key through the downward API
	// (fieldRef metadata.labels['<key>']): Spark sets spark-app-selector when it creates the
	// driver Pod, so the value is there when the sidecar starts. No RBAC on Pods is needed.
	// The id read so serves exactly where AppID served: the identity proof under hostNetwork
	// and the app-id term of the bind selector. An empty env (a Pod without the label) means
	// the id is unknown: the runtime then proves identity as in driver-only mode (the
	// environment's spark.kubernetes.driver.pod.name = POD_NAME, or, on the Pod network, the
	// Pod's own sockets) and leaves the app-id term out of the selector.
	// Added for issue 10; the runtime does not implement it yet.
	AppIDLabel string
	// GuardLabel (--guard-label=<key>=<value>) is the build-time identity of applications
	// found in a carrier other than a spark-submit Pod: sparkui.dev/application=<object name>,
	// which the function puts on the UI Service, Role, RoleBinding and the driver's pod
	// template. When set, the runtime
	//   - guards its bind and withdraw patches with a JSON Patch test of this label on the
	//     Service (in place of the spark-app-selector=<app id> test), since the Service cannot
	//     carry an app id known only at run time;
	//   - binds the selector {<key>: <value>, spark-role: driver}, plus
	//     {spark-app-selector: <app id>} when the app id is known (from --app-id or
	//     --app-id-from-label): that selects exactly this run's driver Pod for kubeflow and
	//     Apache (the id is per run / per attempt), and the workload's driver Pods otherwise
	//     (rules SUI035 and SUI036 report workloads that run two at once);
	//   - keeps the withdrawal rules of design §5.4 (only while this Pod holds the binding),
	//     which is what lets successive runs of one ScheduledSparkApplication or CronJob share
	//     one Service.
	// Empty (spark-submit Pods): the spark-app-selector guard and selector, as before.
	// Added for issue 10; the runtime does not implement it yet.
	GuardLabel string
}

// SplitGuardLabel splits a GuardLabel "key=value"; ok is false when it is not of that form.
func SplitGuardLabel(s string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(s, "=")
	return key, value, ok && key != ""
}

// Flags registers c's fields on fs under their argument names.
func (c *Config) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Service, "service", c.Service, "name of the UI Service to bind")
	fs.StringVar(&c.AppID, "app-id", c.AppID, "Spark application id (the Service's spark-app-selector label)")
	fs.IntVar(&c.UIPort, "ui-port", c.UIPort, "spark.ui.port (0 = random)")
	fs.IntVar(&c.MaxRetries, "max-retries", c.MaxRetries, "spark.port.maxRetries")
	fs.BoolVar(&c.TLS, "tls", c.TLS, "the UI serves HTTPS (spark.ssl.ui.enabled)")
	fs.IntVar(&c.SSLPort, "ssl-ui-port", c.SSLPort, "first HTTPS port when -tls (0 = random)")
	fs.BoolVar(&c.HostNetwork, "host-network", c.HostNetwork, "the Pod uses the node's network namespace")
	fs.StringVar(&c.ExternalURI, "external-uri", c.ExternalURI, "resolve and publish the UI's external URI: nodePort or loadBalancer (empty: not the runtime's job)")
	fs.StringVar(&c.Role, "role", c.Role, "Role that should grant get and patch on the Service, named in 403 messages (default <service without -ui-svc>-ui-svc-binder)")
	fs.StringVar(&c.SkipPorts, "skip-ports", c.SkipPorts, "ports never probed, comma-separated: the driver's RPC and block-manager ports (e.g. 7078,7079)")
	fs.StringVar(&c.UIFilters, "ui-filters", c.UIFilters, "spark.ui.filters (class names), named when the UI refuses the runtime's probes")
	fs.StringVar(&c.AuthBearerFile, "auth-bearer-file", c.AuthBearerFile, "file holding a bearer token sent to the UI's REST API (Authorization: Bearer …); re-read when it changes")
	fs.StringVar(&c.AuthHeaderFile, "auth-header-file", c.AuthHeaderFile, "file holding one header line \"Name: value\" sent to the UI's REST API; re-read when it changes")
	fs.StringVar(&c.AppIDLabel, "app-id-from-label", c.AppIDLabel, "the app id is this label of the runtime's own Pod, passed in env "+EnvAppID+" by the downward API (instead of --app-id)")
	fs.StringVar(&c.GuardLabel, "guard-label", c.GuardLabel, "key=value: the label the UI Service's guard tests and the bind selector carries (instead of spark-app-selector=<app id>)")
}

// Args is the container's args for `run` with c.
func (c Config) Args() []string {
	args := []string{RunCommand, "--service=" + c.Service}
	// spark-submit Pods always pass --app-id (as before); the other carriers pass the label
	// the id is read from, or --app-id when the conf fixes one, or neither.
	if c.AppIDLabel != "" {
		args = append(args, "--app-id-from-label="+c.AppIDLabel)
	}
	if c.AppID != "" || c.GuardLabel == "" {
		args = append(args, "--app-id="+c.AppID)
	}
	if c.GuardLabel != "" {
		args = append(args, "--guard-label="+c.GuardLabel)
	}
	args = append(args,
		"--ui-port="+strconv.Itoa(c.UIPort),
		"--max-retries="+strconv.Itoa(c.MaxRetries),
		"--tls="+strconv.FormatBool(c.TLS),
	)
	if c.TLS {
		args = append(args, "--ssl-ui-port="+strconv.Itoa(c.SSLPort))
	}
	args = append(args, "--host-network="+strconv.FormatBool(c.HostNetwork))
	if c.ExternalURI != "" {
		args = append(args, "--external-uri="+c.ExternalURI)
	}
	if c.Role != "" {
		args = append(args, "--role="+c.Role)
	}
	if c.SkipPorts != "" {
		args = append(args, "--skip-ports="+c.SkipPorts)
	}
	if c.UIFilters != "" {
		args = append(args, "--ui-filters="+c.UIFilters)
	}
	if c.AuthBearerFile != "" {
		args = append(args, "--auth-bearer-file="+c.AuthBearerFile)
	}
	if c.AuthHeaderFile != "" {
		args = append(args, "--auth-header-file="+c.AuthHeaderFile)
	}
	return args
}

// ParsePorts reads a SkipPorts list: comma-separated ports in 1-65535, blanks ignored.
func ParsePorts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("port %q is not in 1-65535", f)
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatPorts writes ports as a SkipPorts list.
func FormatPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// ResolvesURI reports whether the runtime itself resolves the external URI for mode (the
// functionConfig's service.externalURI).
func ResolvesURI(mode ExternalURIMode) bool {
	return mode == ExternalURINodePort || mode == ExternalURILoadBalancer
}

// ParseArgs reads container args written by Args (or by hand).
func ParseArgs(args []string) (Config, error) {
	if len(args) == 0 || args[0] != RunCommand {
		return Config{}, fmt.Errorf("args must start with %q", RunCommand)
	}
	var c Config
	fs := flag.NewFlagSet(RunCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if _, _, ok := SplitGuardLabel(c.GuardLabel); c.GuardLabel != "" && !ok {
		return Config{}, fmt.Errorf("--guard-label %q is not key=value", c.GuardLabel)
	}
	return c, nil
}

// Withdraw is the settings of the `withdraw` command, which the driver container's preStop
// hook runs: ask the runtime listening on Socket to withdraw the UI Service and wait for the
// API server's acknowledgement, Timeout at most.
type Withdraw struct {
	Socket  string
	Timeout time.Duration
}

// DefaultWithdraw is what the preStop hook uses.
func DefaultWithdraw() Withdraw { return Withdraw{Socket: SocketPath, Timeout: WithdrawTimeout} }

// Flags registers w's fields on fs under their argument names.
func (w *Withdraw) Flags(fs *flag.FlagSet) {
	fs.StringVar(&w.Socket, "socket", w.Socket, "the runtime's unix socket")
	fs.DurationVar(&w.Timeout, "timeout", w.Timeout, "give up (exit non-zero) after this long without the acknowledgement")
}

// Args is the command line of `withdraw` with w (after the binary).
func (w Withdraw) Args() []string {
	return []string{WithdrawCommand, "--socket=" + w.Socket, "--timeout=" + w.Timeout.String()}
}

// PreStopCommand is the driver container's preStop exec: ask the runtime to withdraw and wait
// for the API server's answer, within a bound.
func PreStopCommand() []string {
	return append([]string{BinaryPath}, DefaultWithdraw().Args()...)
}

// ExternalURIMode is how the UI's external URI gets published: the functionConfig's
// service.externalURI, and (for the modes the runtime resolves) the runtime's --external-uri.
type ExternalURIMode string

const (
	ExternalURINone ExternalURIMode = "none"
	// ExternalURIAnnotation leaves resolving to an outside controller, asked by annotation.
	ExternalURIAnnotation   ExternalURIMode = "annotation"
	ExternalURINodePort     ExternalURIMode = "nodePort"
	ExternalURILoadBalancer ExternalURIMode = "loadBalancer"
)

// RuntimeVerbs are what the runtime does to its UI Service: get (to report what it found when
// a guarded patch is refused) and patch (bind and withdraw). The function grants exactly
// these, validation checks the input's RBAC grants them.
var RuntimeVerbs = []string{"get", "patch"}

// PortName is the UI Service port's name: Spark's name for the UI port, or "https" when the
// UI serves TLS, so that clients and meshes going by the name speak TLS to it. The function
// names the port, the runtime finds it by name to patch its targetPort.
func PortName(tls bool) string {
	if tls {
		return names.UIPortNameTLS
	}
	return names.UIPortName
}

// DefaultRole is the Role the function names for a UI Service <prefix>-ui-svc: the runtime
// names it in RBAC failure messages when --role is not given.
func DefaultRole(service string) string {
	return strings.TrimSuffix(service, names.UISvcSuffix) + names.BinderSuffix
}

// IsWithdrawCommand reports whether a preStop exec command runs the runtime's withdrawal.
func IsWithdrawCommand(cmd []string) bool { return len(cmd) > 0 && cmd[0] == BinaryPath }
