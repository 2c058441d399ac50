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

	// AuthVolumeName is the Secret volume holding the runtime's credential for a UI behind
	// spark.ui.filters, mounted read-only at AuthMountPath in the runtime container only. The
	// Secret's key is projected to a fixed file name (AuthBearerFileName or AuthHeaderFileName)
	// so the args do not depend on the key; the directory (not a subPath) is mounted so a
	// rotated Secret reaches the runtime, which re-reads the file when it changes.
	AuthVolumeName     = "sparkui-runtime-auth"
	AuthMountPath      = "/var/run/sparkui/auth"
	AuthBearerFileName = "bearer-token"
	AuthHeaderFileName = "header"

	// ImageBinaryPath is the runtime binary in the runtime image (Dockerfile,
	// internal/ociimage): its entrypoint, and what the startup probe execs.
	ImageBinaryPath = "/sparkui-runtime"

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

	// EnvAppID is --app-id given through the environment (every flag of run reads
	// SPARKUI_<FLAG> when not on the command line). For carriers whose application id is not
	// known at build time the function sets it from the downward API,
	// fieldRef metadata.labels['spark-app-selector'] (Spark labels its driver Pod with the id;
	// for a workload's Pod the label is usually absent and the value is ""), and sets
	// GuardLabel. An empty id matches no application: identity then rests on the Pod network
	// (every live UI in the Pod's network namespace is this Pod's) or, under hostNetwork, on the
	// UI's spark.kubernetes.driver.pod.name being POD_NAME (docs/runtime.md).
	EnvAppID = "SPARKUI_APP_ID"
	// AppIDFieldPath is the downward-API fieldRef.fieldPath of EnvAppID: the driver Pod's
	// spark-app-selector label (Spark's KubernetesDriverConf labels the driver Pod with it;
	// kubeflow's value is random per run, Apache's is <name>-<attempt>).
	AppIDFieldPath = "metadata.labels['" + names.LabelAppSelector + "']"

	// LabelBoundPod is the Service label the bind sets to this Pod's UID when NoOwnerReference
	// is set: the proof, tested by the withdrawal and the URI publication, that the Service is
	// still bound by this Pod and not by a later one (the next run, a replacement Pod with the
	// same labels and so the same selector). A label, not an annotation: a JSON Patch `add`
	// needs the parent map to exist, and metadata.labels exists whenever the guard label
	// does. The manifests never declare it, so a re-apply keeps it.
	LabelBoundPod = "sparkui.dev/bound-pod"

	// EnvRunLabel carries, for a driver workload (Deployment, StatefulSet, Job, CronJob), the
	// value of the label that tells this Pod's run from the workload's other Pods (downward
	// API fieldRef metadata.labels['<key>'], key from the function); the function writes it
	// into --selector as $(EnvRunLabel), which the kubelet expands when the container starts.
	// It is not a SPARKUI_<FLAG> name of any flag, so the runtime never reads it as one.
	EnvRunLabel = "SPARKUI_RUN_LABEL_VALUE"
)

// Probe is the runtime container's startupProbe: an exec handler and its timing.
type Probe struct {
	Command                                         []string
	PeriodSeconds, TimeoutSeconds, FailureThreshold int
}

// StartupProbe is there for what it makes the API server do, not for what it checks. The API
// server refuses a startupProbe on an init container without restartPolicy: Always
// (pkg/apis/core/validation validateInitContainers: "may not be set for init containers
// without restartPolicy=Always"). Where a kubeflow CRD or operator drops restartPolicy from
// the runtime (CRDs before chart 1.3.2, operators built with k8s.io/api < 0.28; docs/operators.md),
// the driver Pod is then refused at creation with that message, instead of starting with an
// init container that never exits and so a driver that never starts.
//
// A native sidecar's startupProbe gates the start of the Pod's main containers, so it must
// succeed at once and cost nothing: `--version` exits 0 without reading anything, in every
// version of the runtime (an image pinned to an older tag still passes). periodSeconds 1
// (initialDelaySeconds left at 0) delays the driver by about a second at most; should the
// exec fail (an image without the binary at ImageBinaryPath), the kubelet restarts the
// runtime after FailureThreshold periods and reports why in the Pod's events.
var StartupProbe = Probe{
	Command:          []string{ImageBinaryPath, "--version"},
	PeriodSeconds:    1,
	TimeoutSeconds:   1,
	FailureThreshold: 10,
}

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

	// The fields below let successive runs of one carrier (a ScheduledSparkApplication's or
	// CronJob's runs, a workload's replacement Pods, an operator's retries) share one UI
	// Service whose Spark application id is not known at build time. All empty/false: the
	// spark-submit behaviour, and Args writes nothing for them.

	// GuardLabel is KEY=VALUE, the Service label every patch of the runtime `test`s instead of
	// spark-app-selector=<AppID> (bind, withdrawal, URI publication): for carriers other than
	// a spark-submit Pod, sparkui.dev/application=<object name>. Key and value must be a valid
	// label key and a non-empty label value. Empty: the guard is spark-app-selector=<AppID>.
	GuardLabel string
	// PodSelector is the selector the bind writes to select this run's driver Pod,
	// "k=v[,k=v]" (flag --selector). Empty: spark-app-selector=<AppID>,spark-role=driver. The
	// function may write $(VAR) references that the kubelet expands from the container's env
	// (e.g. spark-app-selector=$(SPARKUI_APP_ID),spark-role=driver, with SPARKUI_APP_ID from
	// the downward API). The kubelet leaves a reference to an undefined variable verbatim and
	// expands a defined but empty one (a label the Pod lacks) to "": the runtime refuses a
	// selector that still contains "$(", or whose keys or values are empty or not valid label
	// keys/values, and never binds it (a term k= would select every Pod that lacks a value in
	// the same way, e.g. other runs' Pods). It then reports the reason (log, termination log)
	// and waits for SIGTERM without binding.
	PodSelector string
	// NoOwnerReference (flag --owner-reference=false) makes the bind leave the Service's
	// ownerReferences alone: the Service belongs to the pipeline and outlives each run (with
	// this Pod as owner, deleting a finished run's Pod, as CronJob and ScheduledSparkApplication
	// history limits do, would have the garbage collector delete the shared Service before the
	// next run binds it). The "this Pod holds the binding" guard of the withdrawal and the URI
	// publication then tests the Service label LabelBoundPod = this Pod's UID, which the bind
	// writes instead of the ownerReference. false: the bind makes this Pod the Service's owner
	// and that ownerReference is the guard.
	NoOwnerReference bool

	// NoEvents (flag --events=false, functionConfig runtime.events: false) turns the
	// runtime's Kubernetes Events off (docs/events.md), for clusters that forbid granting
	// create on events; the function then leaves the events rule out of the Role. false: the
	// runtime records them (contract 1.2; a 1.1 runtime ignores the flag as a newer contract's).
	NoEvents bool
}

// Flags registers c's fields on fs under their argument names.
func (c *Config) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Service, "service", c.Service, "name of the UI Service to bind")
	fs.StringVar(&c.AppID, "app-id", c.AppID, "Spark application id (the Service's spark-app-selector label); may be empty with --guard-label (then usually from $SPARKUI_APP_ID)")
	fs.IntVar(&c.UIPort, "ui-port", c.UIPort, "spark.ui.port (0 = random)")
	fs.IntVar(&c.MaxRetries, "max-retries", c.MaxRetries, "spark.port.maxRetries")
	fs.BoolVar(&c.TLS, "tls", c.TLS, "the UI serves HTTPS (spark.ssl.ui.enabled)")
	fs.IntVar(&c.SSLPort, "ssl-ui-port", c.SSLPort, "first HTTPS port when --tls (0 = random)")
	fs.BoolVar(&c.HostNetwork, "host-network", c.HostNetwork, "the Pod uses the node's network namespace")
	fs.StringVar(&c.ExternalURI, "external-uri", c.ExternalURI, "resolve and publish the UI's external URI: nodePort or loadBalancer (empty: not the runtime's job)")
	fs.StringVar(&c.Role, "role", c.Role, "Role that should grant get and patch on the Service, named in 403 messages (default <service without -ui-svc>-ui-svc-binder)")
	fs.StringVar(&c.SkipPorts, "skip-ports", c.SkipPorts, "ports never probed, comma-separated: the driver's RPC and block-manager ports (e.g. 7078,7079)")
	fs.StringVar(&c.UIFilters, "ui-filters", c.UIFilters, "spark.ui.filters (class names), named when the UI refuses the runtime's probes")
	fs.StringVar(&c.AuthBearerFile, "auth-bearer-file", c.AuthBearerFile, "file holding a bearer token sent to the UI's REST API (Authorization: Bearer …); re-read when it changes")
	fs.StringVar(&c.AuthHeaderFile, "auth-header-file", c.AuthHeaderFile, "file holding one header line \"Name: value\" sent to the UI's REST API; re-read when it changes")
	fs.StringVar(&c.GuardLabel, "guard-label", c.GuardLabel, "KEY=VALUE: the Service label the runtime's patches test instead of spark-app-selector=<app-id> (then --app-id may be empty)")
	fs.StringVar(&c.PodSelector, "selector", c.PodSelector, "selector that picks the driver Pod when bound, k=v[,k=v] (default spark-app-selector=<app-id>,spark-role=driver); refused if it holds an unexpanded $( or an empty key or value")
	fs.Var((*negFlag)(&c.NoEvents), "events", "record Kubernetes Events about the driver Pod (false: none; the Role then needs no events rule)")
	fs.Var((*negFlag)(&c.NoOwnerReference), "owner-reference", "the bind makes this Pod the Service's owner (false: the Service outlives the Pod; the bind writes the label "+LabelBoundPod+" instead)")
}

// negFlag is a flag that sets the negation of a Config field (--owner-reference for
// NoOwnerReference, --events for NoEvents) whose zero value is the default, so that existing
// Config literals keep today's behaviour.
type negFlag bool

func (o *negFlag) String() string {
	if o == nil {
		return "true"
	}
	return strconv.FormatBool(!bool(*o))
}

func (o *negFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*o = negFlag(!v)
	return nil
}

func (o *negFlag) IsBoolFlag() bool { return true }

// Args is the container's args for `run` with c.
func (c Config) Args() []string {
	args := []string{
		RunCommand,
		"--service=" + c.Service,
	}
	// Without an id at build time (GuardLabel set) the function passes it as $SPARKUI_APP_ID
	// (EnvAppID) from the downward API; an --app-id on the command line would win over it.
	if c.AppID != "" {
		args = append(args, "--app-id="+c.AppID)
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
	// Optional settings are written only when set, in this order, so that an output without
	// them stays byte-identical to what earlier versions wrote.
	for _, f := range []struct{ name, value string }{
		{"external-uri", c.ExternalURI},
		{"role", c.Role},
		{"skip-ports", c.SkipPorts},
		{"ui-filters", c.UIFilters},
		{"auth-bearer-file", c.AuthBearerFile},
		{"auth-header-file", c.AuthHeaderFile},
		{"guard-label", c.GuardLabel},
		{"selector", c.PodSelector},
	} {
		if f.value != "" {
			args = append(args, "--"+f.name+"="+f.value)
		}
	}
	if c.NoOwnerReference {
		args = append(args, "--owner-reference=false")
	}
	if c.NoEvents {
		args = append(args, "--events=false")
	}
	return args
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
	return c, nil
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

// The one more rule the function's Role has unless Events are off (NoEvents): what client-go's
// events library sends to events.k8s.io/v1 (POST a new Event, PATCH a series; never GET or
// UPDATE: k8s.io/client-go tools/events event_broadcaster.go recordEvent). It cannot be
// narrowed by resourceNames: an Event's name is generated, and the RBAC authorizer checks a
// create before any name exists.
var (
	EventsAPIGroup = "events.k8s.io"
	EventsResource = "events"
	EventsVerbs    = []string{"create", "patch"}
)

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
