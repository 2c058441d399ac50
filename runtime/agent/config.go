package agent

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// Config is everything the runtime is told.
type Config struct {
	sidecar.Config
	PodName, PodNamespace, PodUID string

	// Selector is the bind's selector; default --selector (sidecar.Config.PodSelector), else
	// spark-app-selector=<app-id>, spark-role=driver.
	Selector map[string]string

	Poll           time.Duration // watch interval, at least MinPoll; 0 = the default, 100ms
	ProbeTimeout   time.Duration // one REST API request; default 1s
	RequestTimeout time.Duration // one API server request; default 5s
	WaitLog        time.Duration // period of "still waiting for the UI"; default 30s
	ServiceWait    time.Duration // 404 retries before it is reported as fatal; default 2m
	// WaitingInterval: the least time between two waiting-state writes, and before the first;
	// default DefaultWaitingInterval (waiting.go). Not a flag: tests shorten it.
	WaitingInterval time.Duration
	// Backoff between failed API requests: capped, exponential, jittered. Default 200ms×2
	// up to 10s (unreachable API server) and up to 30s (RBAC, missing or foreign Service).
	Backoff, FatalBackoff wait.Backoff

	Socket         string // control socket; "" = none
	StateFile      string // remembers a binding across container restarts; "" = none
	TerminationLog string // last fatal reason; "" = none
	// TerminationNotice is kept first in every termination message the agent writes: the
	// settings this runtime ignored (runcmd's skew notice). Without it the agent's own
	// writes, on a reason cleared at the bind, erased the notice users look for there.
	TerminationNotice string
	ProcRoot          string // "" = /proc
	Sockets           string // where the listening sockets are read: auto (default), netlink, proc

	// HistoryURL, when set, makes every withdrawal after a verified bind hand the Service off
	// to the shared History Server redirector listening on RedirectorPort (docs/history.md;
	// flags --history-url and --redirector-port, $SPARKUI_HISTORY_URL and
	// $SPARKUI_REDIRECTOR_PORT as the function writes them).
	HistoryURL     string
	RedirectorPort int

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
	if c.WaitingInterval <= 0 {
		c.WaitingInterval = DefaultWaitingInterval
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
		if c.PodSelector != "" {
			c.Selector, _ = sidecar.ParseSelector(c.PodSelector) // checked by Validate
		} else if c.AppID != "" {
			c.Selector = binder.DefaultSelector(c.AppID)
		}
	}
}

// selector is the bind's selector as defaults sets it, and what is wrong with it.
func (c *Config) selector() (map[string]string, error) {
	switch {
	case len(c.Selector) > 0:
		var terms []string
		for k, v := range c.Selector {
			terms = append(terms, k+"="+v)
		}
		return sidecar.ParseSelector(strings.Join(terms, ","))
	case c.PodSelector != "":
		return sidecar.ParseSelector(c.PodSelector)
	case c.AppID == "":
		return nil, errors.New("no --selector and an empty --app-id ($" + sidecar.EnvAppID + "): nothing selects this run's driver Pod")
	}
	return binder.DefaultSelector(c.AppID), nil
}

// Checked is a Config with its defaults applied and validated: what New runs with, so a
// configuration is checked once, where it is read.
type Checked struct{ c Config }

// Check applies the defaults and validates the result.
func (c Config) Check() (Checked, error) {
	c.defaults()
	if err := c.Validate(); err != nil {
		return Checked{}, err
	}
	return Checked{c}, nil
}

// Config is the configuration as checked, defaults applied.
func (k Checked) Config() Config { return k.c }

// Validate reports a configuration the runtime cannot work with.
func (c *Config) Validate() error {
	var errs []string
	if c.Service == "" {
		errs = append(errs, "--service is required")
	}
	// With a guard label the id may be empty ($SPARKUI_APP_ID from a label the Pod lacks):
	// an empty id matches no application (sparkapi.Prober), identity rests on the network.
	if c.AppID == "" && c.GuardLabel == "" {
		errs = append(errs, "--app-id is required (unless --guard-label is given)")
	}
	if strings.Contains(c.AppID, "$(") {
		errs = append(errs, "--app-id "+c.AppID+" holds an unexpanded $(VAR) reference: the variable is not defined in the container's env")
	}
	if c.GuardLabel != "" {
		if _, _, err := sidecar.ParseLabel(c.GuardLabel); err != nil {
			errs = append(errs, "--guard-label: "+err.Error())
		}
	}
	if _, err := c.selector(); err != nil {
		errs = append(errs, "--selector: "+err.Error()+"; not binding a selector that could select the wrong Pods or none")
	}
	for _, e := range [][2]string{{sidecar.EnvPodName, c.PodName}, {sidecar.EnvPodNamespace, c.PodNamespace}, {sidecar.EnvPodUID, c.PodUID}} {
		if e[1] == "" {
			errs = append(errs, "$"+e[0]+" is required (downward API)")
		}
	}
	// Spark accepts spark.ui.port 0 (random) or 1024-65535 and exits the driver otherwise
	// (core/src/main/scala/org/apache/spark/internal/config/UI.scala, UI_PORT's check).
	for _, p := range []struct {
		flag string
		v    int
	}{{"--ui-port", c.UIPort}, {"--ssl-ui-port", c.SSLPort}} {
		if !sparkPort(p.v) {
			errs = append(errs, fmt.Sprintf("%s %d: Spark accepts 0 (random) or 1024-65535", p.flag, p.v))
		}
	}
	if c.MaxRetries < 0 {
		errs = append(errs, fmt.Sprintf("--max-retries %d: must be 0 or more", c.MaxRetries))
	}
	if c.Poll != 0 { // 0 is the default
		if err := CheckPoll(c.Poll); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if _, err := sidecar.ParsePorts(c.SkipPorts); err != nil {
		errs = append(errs, "--skip-ports: "+err.Error())
	}
	if c.AuthBearerFile != "" && c.AuthHeaderFile != "" {
		errs = append(errs, "give one of --auth-bearer-file and --auth-header-file")
	}
	if c.HistoryURL != "" {
		if err := sidecar.CheckHistoryURL(c.HistoryURL); err != nil {
			errs = append(errs, "--history-url ($"+sidecar.EnvHistoryURL+"): "+err.Error())
		}
		if err := sidecar.CheckRedirectorPort(c.RedirectorPort); err != nil {
			errs = append(errs, "--redirector-port ($"+sidecar.EnvRedirectorPort+"): "+err.Error())
		}
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

// MinPoll is the shortest --poll-interval: each poll reads the network namespace's socket
// table, and at 1ns that loop alone took 60 % of a core.
const MinPoll = 10 * time.Millisecond

// CheckPoll refuses a --poll-interval below MinPoll, zero and negative ones included: the
// watch would otherwise spin, or quietly run at another interval than the one logged.
func CheckPoll(d time.Duration) error {
	if d < MinPoll {
		return fmt.Errorf("--poll-interval %v: must be at least %v", d, MinPoll)
	}
	return nil
}

func sparkPort(p int) bool { return p == 0 || (p >= 1024 && p <= 65535) }

// UserPort is the port Spark tries at offset from base: past 65535 it wraps to 1024 and up
// (core/src/main/scala/org/apache/spark/util/Utils.scala, userPort).
func UserPort(base, offset int) int {
	return (base+offset-1024)%(65536-1024) + 1024
}

// Ports are the ports the UI may bind, in the order Spark tries them
// (Utils.startServiceOnPort: base, then each retry at UserPort(base, i)); nil for a random port.
// With TLS the HTTPS connector's base is --ssl-ui-port (the function passes Spark's
// spark.ssl.ui.port, or UserPort(spark.ui.port, 400) when unset).
func (c *Config) Ports() []int {
	base := c.UIPort
	if c.TLS {
		base = c.SSLPort
	}
	if base == 0 {
		return nil
	}
	// More retries than ports would only repeat them.
	n := min(c.MaxRetries, 65535-1024)
	out := make([]int, 0, n+1)
	for i := 0; i <= n; i++ {
		out = append(out, UserPort(base, i))
	}
	return out
}

// PortName is the name of the UI Service's port.
func (c *Config) PortName() string { return sidecar.PortName(c.TLS) }
