package sparkconf

import (
	"fmt"
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
)

// Spark's own defaults.
const (
	DefaultUIPort     = 4040
	DefaultMaxRetries = 16
	sslPortOffset     = 400
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
func Derive(props map[string]string) (Settings, []*SettingError) {
	var errs []*SettingError
	boolean := func(key string, def bool) bool {
		v, ok := props[key]
		if !ok {
			return def
		}
		// Scala's String.toBoolean: case-insensitive "true"/"false", nothing else.
		switch strings.ToLower(v) {
		case "true":
			return true
		case "false":
			return false
		}
		errs = append(errs, &SettingError{Key: key, Value: v, Want: "true or false"})
		return def
	}
	integer := func(key string, def, lo, hi int, want string) (int, bool) {
		v, ok := props[key]
		if !ok {
			return def, false
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || int(n) < lo || int(n) > hi {
			errs = append(errs, &SettingError{Key: key, Value: v, Want: want})
			return def, false
		}
		return int(n), true
	}
	const portWant = "an integer port from 0 to 65535"
	var s Settings
	s.UIEnabled = boolean(KeyUIEnabled, true)
	s.UIPort, _ = integer(KeyUIPort, DefaultUIPort, 0, 65535, portWant)
	s.MaxRetries, _ = integer(KeyMaxRetries, DefaultMaxRetries, 0, 65535, "an integer from 0 to 65535")
	// spark.ssl.ui.* inherits from spark.ssl.*, as Spark's SSLOptions does.
	sslDefault := boolean(KeySSLEnabled, false)
	s.TLS = boolean(KeySSLUIEnabled, sslDefault)
	sslPort, set := integer(KeySSLPort, 0, 0, 65535, portWant)
	if uiSSL, ok := integer(KeySSLUIPort, 0, 0, 65535, portWant); ok {
		sslPort, set = uiSSL, true
	}
	if s.TLS {
		switch {
		case set:
			s.SSLPort = sslPort
		case s.UIPort > 0:
			s.SSLPort = userPort(s.UIPort, sslPortOffset)
		default:
			s.SSLPort = 0
		}
	}
	s.DriverOnly = strings.HasPrefix(strings.TrimSpace(props[KeyDriverMaster]), "local")
	s.ClientMode = strings.EqualFold(props[KeyDeployMode], "client")
	s.DeleteOnTermination = boolean(KeyDeleteOnTermination, true)
	return s, errs
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
