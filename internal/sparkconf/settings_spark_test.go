package sparkconf

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeriveParsesLikeSpark pins how each key's reader in Spark parses its value
// (docs/spark-conformance.md): ConfigBuilder entries trim (ConfigHelpers.toNumber/toBoolean),
// SparkConf's plain getters do not; a range applies only where Spark binds the port.
func TestDeriveParsesLikeSpark(t *testing.T) {
	for _, tc := range []struct {
		name    string
		props   map[string]string
		check   func(Settings) bool
		errKeys []string
	}{
		// ConfigBuilder entries: conf.get(UI_PORT), conf.get(UI_ENABLED), Config.scala's
		// deleteOnTermination, Connect.scala's binding port.
		{"ui port trimmed", map[string]string{KeyUIPort: " 4045\t"}, func(s Settings) bool { return s.UIPort == 4045 }, nil},
		{"ui enabled trimmed", map[string]string{KeyUIEnabled: " FALSE "}, func(s Settings) bool { return !s.UIEnabled }, nil},
		{"deleteOnTermination trimmed", map[string]string{KeyDeleteOnTermination: "false "}, func(s Settings) bool { return !s.DeleteOnTermination }, nil},
		{"reverse proxy trimmed", map[string]string{KeyReverseProxy: " TRUE"}, func(s Settings) bool { return s.ReverseProxy }, nil},
		{"connect plugin from the default list", map[string]string{KeyPluginsDefaultList: ConnectPlugin + " ,", KeyPlugins: "com.example.P"},
			func(s Settings) bool { return s.ConnectPlugin }, nil},
		{"connect port trimmed", map[string]string{KeyConnectPort: " 15010"}, func(s Settings) bool { return s.ConnectPort == 15010 }, nil},
		// Plain getters: Utils.portMaxRetries (.map(_.toInt)), SSLOptions.parse
		// (getBoolean, .map(_.toInt)), BasicDriverFeatureStep (getInt).
		{"maxRetries not trimmed", map[string]string{KeyMaxRetries: " 3"}, func(s Settings) bool { return s.MaxRetries == DefaultMaxRetries }, []string{KeyMaxRetries}},
		{"ssl enabled not trimmed", map[string]string{KeySSLEnabled: "true "}, func(s Settings) bool { return !s.TLS }, []string{KeySSLEnabled}},
		{"driver port not trimmed", map[string]string{KeyDriverPort: " 7078"}, func(s Settings) bool { return s.DriverPort == DefaultK8sDriverPort }, []string{KeyDriverPort}},
		// portMaxRetries has no upper bound (offsets wrap through userPort).
		{"many retries", map[string]string{KeyMaxRetries: "100000"}, func(s Settings) bool { return s.MaxRetries == 100000 }, nil},
		{"negative retries", map[string]string{KeyMaxRetries: "-1"}, func(s Settings) bool { return s.MaxRetries == DefaultMaxRetries }, []string{KeyMaxRetries}},
		// No UI: startServiceOnPort's range never applies, the value must still parse.
		{"ui off, privileged port", map[string]string{KeyUIEnabled: "false", KeyUIPort: "80"}, func(s Settings) bool { return s.UIPort == 80 }, nil},
		{"ui off, not a number", map[string]string{KeyUIEnabled: "false", KeyUIPort: "http"}, func(s Settings) bool { return s.UIPort == DefaultUIPort }, []string{KeyUIPort}},
		{"ui off, past 65535", map[string]string{KeyUIEnabled: "false", KeyUIPort: "70000"}, func(s Settings) bool { return s.UIPort == DefaultUIPort }, []string{KeyUIPort}},
		// TLS off: SSLOptions.parse (3.x) only applies toInt and require(p >= 0).
		{"tls off, privileged secure port", map[string]string{KeySSLUIPort: "443"}, func(s Settings) bool { return !s.TLS && s.SSLPort == 0 }, nil},
		{"tls off, secure port past 65535", map[string]string{KeySSLUIPort: "70000"}, func(s Settings) bool { return !s.TLS }, nil},
		{"tls off, negative secure port", map[string]string{KeySSLUIPort: "-1"}, func(s Settings) bool { return !s.TLS }, []string{KeySSLUIPort}},
		{"tls off, secure port not a number", map[string]string{KeySSLUIPort: "https"}, func(s Settings) bool { return !s.TLS }, []string{KeySSLUIPort}},
		{"tls on, privileged secure port", map[string]string{KeySSLEnabled: "true", KeySSLUIPort: "443"}, func(s Settings) bool { return s.TLS && s.SSLPort == 4440 }, []string{KeySSLUIPort}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Derive(tc.props)
			var keys []string
			for _, e := range errs {
				keys = append(keys, e.Key)
			}
			if d := cmp.Diff(tc.errKeys, keys); d != "" {
				t.Errorf("keys in error (-want +got):\n%s", d)
			}
			if !tc.check(got) {
				t.Errorf("settings %+v", got)
			}
		})
	}
}

// UI_FILTERS is read through Utils.stringToSeq: split on ',', each part trimmed, empty parts
// dropped.
func TestFilters(t *testing.T) {
	for v, want := range map[string][]string{
		"":                              nil,
		" , ,":                          nil,
		" a.B ,c.D,, ":                  {"a.B", "c.D"},
		"org.apache.spark.ui.JWSFilter": {"org.apache.spark.ui.JWSFilter"},
	} {
		if d := cmp.Diff(want, Filters(map[string]string{KeyUIFilters: v})); d != "" {
			t.Errorf("Filters(%q) (-want +got):\n%s", v, d)
		}
	}
}
