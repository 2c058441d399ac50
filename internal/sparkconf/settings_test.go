package sparkconf

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDerive(t *testing.T) {
	base := Settings{UIEnabled: true, UIPort: 4040, MaxRetries: 16, DeleteOnTermination: true,
		DriverPort: 7078, BlockManagerPort: 7079, ConnectPort: 15002}
	with := func(f func(*Settings)) Settings { s := base; f(&s); return s }
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  Settings
		front int
	}{
		{"defaults", nil, base, 4040},
		{"random", map[string]string{KeyUIPort: "0"}, with(func(s *Settings) { s.UIPort = 0 }), 4040},
		{"fixed", map[string]string{KeyUIPort: "4050", KeyMaxRetries: "3"}, with(func(s *Settings) { s.UIPort, s.MaxRetries = 4050, 3 }), 4050},
		{"tls inherits spark.ssl.enabled, port+400", map[string]string{KeySSLEnabled: "true"},
			with(func(s *Settings) { s.TLS, s.SSLPort = true, 4440 }), 4440},
		{"ui tls overrides spark.ssl.enabled", map[string]string{KeySSLEnabled: "true", KeySSLUIEnabled: "false"}, base, 4040},
		{"tls random", map[string]string{KeySSLUIEnabled: "True", KeyUIPort: "0"},
			with(func(s *Settings) { s.TLS, s.UIPort, s.SSLPort = true, 0, 0 }), 4440},
		{"tls explicit", map[string]string{KeySSLUIEnabled: "true", KeySSLUIPort: "8443", KeySSLPort: "9443"},
			with(func(s *Settings) { s.TLS, s.SSLPort = true, 8443 }), 8443},
		// SSLOptions.parse reads "$ns.port" without the defaults' port: spark.ssl.port is not
		// inherited, the UI's HTTPS port stays userPort(spark.ui.port, 400) (issue 31).
		{"tls ignores spark.ssl.port", map[string]string{KeySSLEnabled: "true", KeySSLPort: "9443", KeyUIPort: "4045"},
			with(func(s *Settings) { s.TLS, s.UIPort, s.SSLPort = true, 4045, 4445 }), 4445},
		{"tls random ui port ignores spark.ssl.port", map[string]string{KeySSLUIEnabled: "true", KeySSLPort: "9443", KeyUIPort: "0"},
			with(func(s *Settings) { s.TLS, s.UIPort, s.SSLPort = true, 0, 0 }), 4440},
		{"spark.ssl.port below 1024 is no error", map[string]string{KeySSLPort: "443"}, base, 4040},
		{"tls explicit random secure port", map[string]string{KeySSLUIEnabled: "true", KeySSLUIPort: "0"},
			with(func(s *Settings) { s.TLS, s.SSLPort = true, 0 }), 4440},
		{"userPort wraps like Spark", map[string]string{KeySSLUIEnabled: "true", KeyUIPort: "65400"},
			with(func(s *Settings) { s.TLS, s.UIPort, s.SSLPort = true, 65400, 1288 }), 1288},
		{"userPort wraps past 65535 to 1024", map[string]string{KeySSLUIEnabled: "true", KeyUIPort: "65136"},
			with(func(s *Settings) { s.TLS, s.UIPort, s.SSLPort = true, 65136, 1024 }), 1024},
		{"ui disabled", map[string]string{KeyUIEnabled: "FALSE"}, with(func(s *Settings) { s.UIEnabled = false }), 4040},
		{"driver-only", map[string]string{KeyDriverMaster: "local[*]"}, with(func(s *Settings) { s.DriverOnly = true }), 4040},
		{"client", map[string]string{KeyDeployMode: "client"},
			with(func(s *Settings) { s.ClientMode, s.DriverPort, s.BlockManagerPort = true, 0, 0 }), 4040},
		{"driver-only in client deploy mode keeps Kubernetes' ports", map[string]string{KeyDeployMode: "client", KeyDriverMaster: "local[2]"},
			with(func(s *Settings) { s.ClientMode, s.DriverOnly = true, true }), 4040},
		{"client with set ports", map[string]string{KeyDeployMode: "client", KeyDriverPort: "29413", KeyBlockManagerPort: "29414"},
			with(func(s *Settings) { s.ClientMode, s.DriverPort, s.BlockManagerPort = true, 29413, 29414 }), 4040},
		{"driver block-manager port wins", map[string]string{KeyBlockManagerPort: "30000", KeyDriverBlockManagerPort: "30001", KeyDriverPort: "0"},
			with(func(s *Settings) { s.DriverPort, s.BlockManagerPort = 0, 30001 }), 4040},
		{"connect plugin and port", map[string]string{KeyPlugins: "com.example.P, org.apache.spark.sql.connect.SparkConnectPlugin", KeyConnectPort: "15010"},
			with(func(s *Settings) { s.ConnectPlugin, s.ConnectPort = true, 15010 }), 4040},
		{"lowest and highest user ports", map[string]string{KeyUIPort: "1024", KeySSLUIEnabled: "true", KeySSLUIPort: "65535"},
			with(func(s *Settings) { s.UIPort, s.TLS, s.SSLPort = 1024, true, 65535 }), 65535},
		{"keep services", map[string]string{KeyDeleteOnTermination: "false"}, with(func(s *Settings) { s.DeleteOnTermination = false }), 4040},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Derive(tc.props)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if f := got.FrontPort(); f != tc.front {
				t.Errorf("FrontPort = %d, want %d", f, tc.front)
			}
		})
	}
}

func TestSkipPorts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		props   map[string]string
		connect bool
		want    []int
	}{
		{"cluster defaults", nil, false, []int{7078, 7079}},
		{"connect server", nil, true, []int{7078, 7079, 15002}},
		{"connect plugin, own port", map[string]string{KeyPlugins: ConnectPlugin, KeyConnectPort: "16000"}, false, []int{7078, 7079, 16000}},
		{"client mode: random ports unknown", map[string]string{KeyDeployMode: "client"}, false, nil},
		{"same port twice, sorted", map[string]string{KeyDriverPort: "9000", KeyBlockManagerPort: "9000"}, true, []int{9000, 15002}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, errs := Derive(tc.props)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if d := cmp.Diff(tc.want, s.SkipPorts(tc.connect)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDerivePortRange(t *testing.T) {
	for _, key := range []string{KeyUIPort, KeySSLUIPort, KeyDriverPort, KeyBlockManagerPort, KeyDriverBlockManagerPort, KeyConnectPort} {
		for _, v := range []string{"1", "80", "1023", "65536", "-1", "2147483648"} {
			// spark.ssl.ui.port is bound only by an enabled HTTPS connector.
			_, errs := Derive(map[string]string{key: v, KeySSLUIEnabled: "true"})
			want := key + "=" + strconv.Quote(v) + " is not 0 (a random port) or an integer port from 1024 to 65535"
			if len(errs) != 1 || errs[0].Error() != want {
				t.Errorf("%s=%s: errors %v, want [%s]", key, v, errs, want)
			}
		}
		for _, v := range []string{"0", "1024", "65535"} {
			if _, errs := Derive(map[string]string{key: v, KeySSLUIEnabled: "true"}); len(errs) != 0 {
				t.Errorf("%s=%s: errors %v, want none", key, v, errs)
			}
		}
	}
}

// spark.ssl.port is only parsed for the default namespace, where SSLOptions.parse applies
// "toInt" and require(p >= 0) and nothing else.
func TestDeriveSSLDefaultPort(t *testing.T) {
	for v, bad := range map[string]bool{"-1": true, "x": true, "2147483648": true, "0": false, "80": false, "70000": false} {
		_, errs := Derive(map[string]string{KeySSLPort: v})
		if bad != (len(errs) == 1) || len(errs) > 1 {
			t.Errorf("spark.ssl.port=%s: errors %v, want error %v", v, errs, bad)
		}
	}
}

func TestDeriveErrors(t *testing.T) {
	got, errs := Derive(map[string]string{
		KeyUIPort: "40x0", KeyMaxRetries: "-1", KeySSLUIPort: "70000", KeyUIEnabled: "yes", KeySSLEnabled: "true",
	})
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	want := []string{KeyUIEnabled, KeyUIPort, KeyMaxRetries, KeySSLUIPort}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("keys in error (-want +got):\n%s", d)
	}
	if got.UIPort != DefaultUIPort || got.MaxRetries != DefaultMaxRetries || !got.UIEnabled {
		t.Errorf("bad values must fall back to Spark's defaults, got %+v", got)
	}
}
