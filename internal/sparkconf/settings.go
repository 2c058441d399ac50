package sparkconf

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Spark property keys sparkui reads.
const (
	KeyUIEnabled           = "spark.ui.enabled"
	KeyUIPort              = "spark.ui.port"
	KeyMaxRetries          = "spark.port.maxRetries"
	KeySSLEnabled          = "spark.ssl.enabled"
	KeySSLUIEnabled        = "spark.ssl.ui.enabled"
	KeySSLPort             = "spark.ssl.port"
	KeySSLUIPort           = "spark.ssl.ui.port"
	KeyDriverMaster        = "spark.kubernetes.driver.master"
	KeyDeployMode          = "spark.submit.deployMode"
	KeyAppID               = "spark.app.id"
	KeyDeleteOnTermination = "spark.kubernetes.driver.service.deleteOnTermination"
	KeyPodName             = "spark.kubernetes.driver.pod.name"
	KeyNamespace           = "spark.kubernetes.namespace"
	KeyRedactionRegex      = "spark.redaction.regex"
	KeyUIFilters           = "spark.ui.filters"
	// KeyProxyBase and KeyProxyRedirectURI are what a route under a path prefix needs
	// (docs/routes.md): the prefix of the links Spark writes, and the base of its redirects.
	KeyProxyBase        = "spark.ui.proxyBase"
	KeyProxyRedirectURI = "spark.ui.proxyRedirectUri"
	// KeyReverseProxy and KeyReverseProxyURL: with reverseProxy on, SparkContext replaces
	// the proxyBase system property at start (see Settings.ReverseProxy).
	KeyReverseProxy    = "spark.ui.reverseProxy"
	KeyReverseProxyURL = "spark.ui.reverseProxyUrl"

	// The driver's RPC and block-manager ports (core's internal/config/package.scala
	// DRIVER_PORT, DRIVER_BLOCK_MANAGER_PORT, BLOCK_MANAGER_PORT) and Spark Connect's gRPC
	// port (connector/connect's config/Connect.scala CONNECT_GRPC_BINDING_PORT).
	KeyDriverPort             = "spark.driver.port"
	KeyDriverBlockManagerPort = "spark.driver.blockManager.port"
	KeyBlockManagerPort       = "spark.blockManager.port"
	KeyConnectPort            = "spark.connect.grpc.binding.port"
	KeyPlugins                = "spark.plugins"
	// KeyPluginsDefaultList is prepended to spark.plugins (package.scala PLUGINS
	// .withPrepended(DEFAULT_PLUGINS_LIST, ","), since SPARK-29397 in 3.0).
	KeyPluginsDefaultList = "spark.plugins.defaultList"
)

// Spark's own defaults.
const (
	DefaultUIPort     = 4040
	DefaultMaxRetries = 16
	sslPortOffset     = 400
	// On Kubernetes in cluster mode the driver's RPC and block-manager ports default to these
	// (resource-managers/kubernetes/core Constants.scala DEFAULT_DRIVER_PORT and
	// DEFAULT_BLOCKMANAGER_PORT, applied by features/BasicDriverFeatureStep.scala); elsewhere
	// (client mode) Spark's core default is 0, a random port.
	DefaultK8sDriverPort       = 7078
	DefaultK8sBlockManagerPort = 7079
	// DefaultConnectPort is Spark Connect's gRPC port (Connect.scala CONNECT_GRPC_BINDING_PORT).
	DefaultConnectPort = 15002
	// ConnectPlugin is the plugin class that starts Spark Connect inside an application.
	ConnectPlugin = "org.apache.spark.sql.connect.SparkConnectPlugin"
)

// Settings are the UI-related settings Spark derives from its configuration, with Spark's
// defaults and inheritance rules applied.
type Settings struct {
	UIEnabled  bool
	UIPort     int // spark.ui.port; 0 = random
	MaxRetries int // spark.port.maxRetries
	TLS        bool
	// SSLPort is where the HTTPS connector binds first when TLS is on; 0 = random.
	SSLPort             int
	DriverOnly          bool // spark.kubernetes.driver.master=local[...]
	ClientMode          bool // spark.submit.deployMode=client
	DeleteOnTermination bool
	// DriverPort and BlockManagerPort are the driver's RPC and block-manager ports: the
	// configured ones, else Kubernetes' cluster-mode defaults; 0 when random (client mode
	// without a setting, or set to 0).
	DriverPort, BlockManagerPort int
	// ConnectPort is spark.connect.grpc.binding.port (default 15002).
	ConnectPort int
	// ConnectPlugin: spark.plugins starts Spark Connect in this application.
	ConnectPlugin bool
	// ReverseProxy is spark.ui.reverseProxy (UI.scala UI_REVERSE_PROXY, a booleanConf). When
	// on, SparkContext sets the system property spark.ui.proxyBase to
	// spark.ui.reverseProxyUrl (trailing "/" stripped) + "/proxy/" + the application id, on
	// every cluster manager (SparkContext's init, 3.x and master alike): the proxyBase of the
	// conf no longer reaches UIUtils.uiRoot.
	ReverseProxy bool
}

// SettingError names a key whose value Spark could not use.
type SettingError struct {
	Key, Value, Want string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s=%q is not %s", e.Key, e.Value, e.Want)
}

// Derive computes Settings from properties. Bad values are reported, one error per key, and
// replaced by Spark's default so the rest of the application can still be handled.
//
// Each value is parsed the way its reader in Spark parses it (docs/spark-conformance.md):
// an entry read through its ConfigBuilder (conf.get(UI_PORT)) goes through
// ConfigHelpers.toNumber/toBoolean, which trim the value first; SparkConf's plain getters
// (getInt, getBoolean, getOption(...).map(_.toInt)) do not trim. Values from a properties file
// reach both already trimmed (Utils.getPropertiesFromFile; Parse does the same).
func Derive(props map[string]string) (Settings, []*SettingError) {
	var errs []*SettingError
	// boolean is Scala's String.toBoolean: case-insensitive "true"/"false", nothing else.
	boolean := func(key string, def, trim bool) bool {
		v, ok := props[key]
		if !ok {
			return def
		}
		w := v
		if trim {
			w = javaTrim(v)
		}
		switch strings.ToLower(w) {
		case "true":
			return true
		case "false":
			return false
		}
		errs = append(errs, &SettingError{Key: key, Value: v, Want: "true or false"})
		return def
	}
	// integer reads key as a 32-bit integer (Java's Integer.parseInt) accepted by valid.
	integer := func(key string, def int, trim bool, valid func(int) bool, want string) (int, bool) {
		v, ok := props[key]
		if !ok {
			return def, false
		}
		w := v
		if trim {
			w = javaTrim(v)
		}
		n, err := strconv.ParseInt(w, 10, 32)
		if err != nil || !valid(int(n)) {
			errs = append(errs, &SettingError{Key: key, Value: v, Want: want})
			return def, false
		}
		return int(n), true
	}
	// Every port Spark binds goes through core's util/Utils.scala startServiceOnPort, which
	// requires "startPort == 0 || (1024 <= startPort && startPort < 65536)"; port() applies
	// that to a port Spark binds.
	const portWant = "0 (a random port) or an integer port from 1024 to 65535"
	bindable := func(n int) bool { return n == 0 || (n >= 1024 && n <= 65535) }
	port := func(key string, def int, trim bool) (int, bool) {
		return integer(key, def, trim, bindable, portWant)
	}
	var s Settings
	// UI_ENABLED and UI_PORT are ConfigBuilder entries (core's internal/config/UI.scala),
	// read as conf.get(UI_ENABLED) (SparkContext) and SparkUI.getUIPort (conf.get(UI_PORT)).
	s.UIEnabled = boolean(KeyUIEnabled, true, true)
	if s.UIEnabled {
		s.UIPort, _ = port(KeyUIPort, DefaultUIPort, true)
	} else {
		// No UI is bound, so startServiceOnPort's range never applies; spark-submit still
		// declares the port as the driver's containerPort (Kubernetes' BasicDriverFeatureStep
		// calls SparkUI.getUIPort whatever spark.ui.enabled says), which must parse and which
		// the API server takes from 0 (SUI001/SUI031) to 65535.
		s.UIPort, _ = integer(KeyUIPort, DefaultUIPort, true, func(n int) bool { return n >= 0 && n <= 65535 },
			"an integer from 0 to 65535 (with spark.ui.enabled=false Spark binds no UI, but declares this port on the driver container)")
	}
	// Utils.portMaxRetries: conf.getOption("spark.port.maxRetries").map(_.toInt), no trim
	// and no upper bound; startServiceOnPort then tries offsets 0 to maxRetries, so a
	// negative count tries nothing and every service (the RPC server first) fails to start.
	s.MaxRetries, _ = integer(KeyMaxRetries, DefaultMaxRetries, false, func(n int) bool { return n >= 0 },
		"a non-negative integer (Utils.portMaxRetries: a negative count lets no service bind)")
	// spark.ssl.ui.enabled inherits spark.ssl.enabled (SecurityManager parses "spark.ssl" and
	// passes it as defaults to SSLOptions.parse for "spark.ssl.ui"), but the port does not:
	// SSLOptions.parse reads `$ns.port` with no `.orElse(defaults...)` (core's SSLOptions.scala,
	// 3.x and master alike; docs/security.md: "The default namespace is ignored when reading
	// this configuration"). JettyUtils.startJettyServer then binds
	// sslOptions.port.getOrElse(if (port > 0) Utils.userPort(port, 400) else 0).
	// SSLOptions.parse reads with SparkConf.getBoolean and .map(_.toInt): no trim.
	sslDefault := boolean(KeySSLEnabled, false, false)
	s.TLS = boolean(KeySSLUIEnabled, sslDefault, false)
	// SSLOptions.parse applies "toInt" and require(p >= 0) to `$ns.port`: on Spark 3.x for
	// every namespace, enabled or not; from 4.0 only for an enabled one (parse returns early
	// otherwise). A value that fails there stops the driver on 3.x, so it is reported.
	const sslParsedWant = "a non-negative integer (SSLOptions.parse on Spark 3.x)"
	nonNegative := func(n int) bool { return n >= 0 }
	integer(KeySSLPort, 0, false, nonNegative, sslParsedWant)
	if !s.TLS {
		integer(KeySSLUIPort, 0, false, nonNegative, sslParsedWant)
	} else if p, set := port(KeySSLUIPort, 0, false); set {
		// Only an enabled HTTPS connector binds it (startServiceOnPort's range).
		s.SSLPort = p
	} else if s.UIPort > 0 {
		s.SSLPort = userPort(s.UIPort, sslPortOffset)
	}
	// SparkContext reads it (conf.get(UI_REVERSE_PROXY)) whether or not a UI runs.
	s.ReverseProxy = boolean(KeyReverseProxy, false, true)
	s.DriverOnly = strings.HasPrefix(strings.TrimSpace(props[KeyDriverMaster]), "local")
	s.ClientMode = strings.EqualFold(props[KeyDeployMode], "client")
	// Kubernetes' Config.scala KUBERNETES_DRIVER_SERVICE_DELETE_ON_TERMINATION: booleanConf.
	s.DeleteOnTermination = boolean(KeyDeleteOnTermination, true, true)
	rpcDefault, bmDefault := DefaultK8sDriverPort, DefaultK8sBlockManagerPort
	if s.ClientMode && !s.DriverOnly {
		// Client mode: no BasicDriverFeatureStep, core's defaults (0: random).
		rpcDefault, bmDefault = 0, 0
	}
	// spark-submit's BasicDriverFeatureStep reads these with SparkConf.getInt (no trim):
	// spark.driver.blockManager.port, else spark.blockManager.port.
	s.DriverPort, _ = port(KeyDriverPort, rpcDefault, false)
	bm, _ := port(KeyBlockManagerPort, bmDefault, false)
	s.BlockManagerPort, _ = port(KeyDriverBlockManagerPort, bm, false)
	// Connect.scala CONNECT_GRPC_BINDING_PORT: an intConf.
	s.ConnectPort, _ = port(KeyConnectPort, DefaultConnectPort, true)
	if v, ok := props[KeyRedactionRegex]; ok {
		if _, err := CompileRedaction(v); err != nil && !errors.Is(err, ErrJavaOnlyRegex) {
			errs = append(errs, &SettingError{Key: KeyRedactionRegex, Value: v, Want: "a regular expression (" + err.Error() + ")"})
		}
	}
	// PLUGINS is a stringConf.toSequence read with spark.plugins.defaultList prepended.
	plugins := props[KeyPluginsDefaultList] + "," + props[KeyPlugins]
	s.ConnectPlugin = slices.Contains(stringToSeq(plugins), ConnectPlugin)
	return s, errs
}

// SkipPorts are the ports the runtime must never probe: the driver's RPC and block-manager
// ports (an HTTP request there makes the driver log a "Too large frame" stack trace,
// common/network-common TransportFrameDecoder.scala) and, when connect is true (a Spark
// Connect server), Spark Connect's gRPC port. Random (0) ports are not known ahead and are
// left out; the list is sorted and has no duplicates.
func (s Settings) SkipPorts(connect bool) []int {
	ports := []int{s.DriverPort, s.BlockManagerPort}
	if connect || s.ConnectPlugin {
		ports = append(ports, s.ConnectPort)
	}
	var out []int
	for _, p := range ports {
		if p > 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// userPort is Spark's Utils.userPort: an offset from a base port that wraps around within the
// non-privileged range.
func userPort(base, offset int) int {
	return (base+offset-1024)%(65536-1024) + 1024
}

// FrontPort is the port the UI Service exposes when the user sets none: the configured port
// the UI binds first, or Spark's default when that is random.
func (s Settings) FrontPort() int {
	if s.TLS {
		if s.SSLPort > 0 {
			return s.SSLPort
		}
		return userPort(DefaultUIPort, sslPortOffset)
	}
	if s.UIPort > 0 {
		return s.UIPort
	}
	return DefaultUIPort
}

// Filters are the class names of spark.ui.filters as Spark reads them: UI.scala's UI_FILTERS
// is a stringConf.toSequence, split by Utils.stringToSeq on ',' with each part trimmed and
// empty ones dropped (3.x and master), so " , " installs no filter at all.
func Filters(props map[string]string) []string {
	return stringToSeq(props[KeyUIFilters])
}

// stringToSeq is core's Utils.stringToSeq, how every stringConf.toSequence entry is read.
func stringToSeq(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = javaTrim(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
