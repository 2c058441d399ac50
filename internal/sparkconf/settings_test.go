package sparkconf

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDerive(t *testing.T) {
	base := Settings{UIEnabled: true, UIPort: 4040, MaxRetries: 16, DeleteOnTermination: true}
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
		{"tls inherits spark.ssl.port", map[string]string{KeySSLUIEnabled: "true", KeySSLPort: "9443"},
			with(func(s *Settings) { s.TLS, s.SSLPort = true, 9443 }), 9443},
		{"tls explicit random secure port", map[string]string{KeySSLUIEnabled: "true", KeySSLUIPort: "0"},
			with(func(s *Settings) { s.TLS, s.SSLPort = true, 0 }), 4440},
		{"userPort wraps like Spark", map[string]string{KeySSLUIEnabled: "true", KeyUIPort: "65400"},
			with(func(s *Settings) { s.TLS, s.UIPort, s.SSLPort = true, 65400, 1288 }), 1288},
		{"ui disabled", map[string]string{KeyUIEnabled: "FALSE"}, with(func(s *Settings) { s.UIEnabled = false }), 4040},
		{"driver-only", map[string]string{KeyDriverMaster: "local[*]"}, with(func(s *Settings) { s.DriverOnly = true }), 4040},
		{"client", map[string]string{KeyDeployMode: "client"}, with(func(s *Settings) { s.ClientMode = true }), 4040},
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

func TestDeriveErrors(t *testing.T) {
	got, errs := Derive(map[string]string{
		KeyUIPort: "40x0", KeyMaxRetries: "-1", KeySSLUIPort: "70000", KeyUIEnabled: "yes",
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
