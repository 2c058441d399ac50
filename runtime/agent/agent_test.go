package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/sidecar"
)

func TestInstallFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	dst := filepath.Join(dir, "shared", "sparkui-runtime")
	if err := os.Mkdir(filepath.Dir(dst), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("binary v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	check := func(want string) {
		t.Helper()
		b, err := os.ReadFile(dst)
		st, _ := os.Stat(dst)
		if err != nil || string(b) != want || st.Mode().Perm() != 0o755 {
			t.Fatalf("installed %q mode %v: %v", b, st.Mode(), err)
		}
		ents, _ := os.ReadDir(filepath.Dir(dst))
		if len(ents) != 1 {
			t.Fatalf("temporary files left: %v", ents)
		}
	}
	check("binary v1")
	// Identical: left alone (same inode).
	before, _ := os.Stat(dst)
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(dst)
	if !os.SameFile(before, after) {
		t.Error("an identical binary was rewritten")
	}
	// A new version (the container restarted with a new image) replaces it atomically.
	if err := os.WriteFile(src, []byte("binary v2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := installFile(src, dst); err != nil {
		t.Fatal(err)
	}
	check("binary v2")
	if err := installFile(src, filepath.Join(dir, "missing", "x")); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestConfig(t *testing.T) {
	c := Config{Config: sidecar.Config{Service: "wc-ui-svc", AppID: "spark-1", UIPort: 4040, MaxRetries: 16},
		PodName: "p", PodNamespace: "ns", PodUID: "u"}
	c.defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if f, l := c.PortRange(); f != 4040 || l != 4056 {
		t.Errorf("range %d-%d", f, l)
	}
	if c.Role != "wc-ui-svc-binder" || c.PortName() != "spark-ui" || c.Selector["spark-role"] != "driver" || c.Selector["spark-app-selector"] != "spark-1" {
		t.Errorf("%+v", c)
	}
	c.TLS, c.SSLPort = true, 4440
	if f, l := c.PortRange(); f != 4440 || l != 4456 || c.PortName() != "https" {
		t.Errorf("TLS range %d-%d %s", f, l, c.PortName())
	}
	c.SSLPort = 0
	if f, l := c.PortRange(); f != 0 || l != 0 {
		t.Errorf("random secure port: %d-%d", f, l)
	}
	c.UIPort, c.MaxRetries, c.TLS = 65530, 16, false
	if _, l := c.PortRange(); l != 65535 {
		t.Errorf("last port %d", l)
	}
	err := (&Config{}).Validate()
	for _, want := range []string{"--service", "--app-id", "$POD_NAME", "$POD_NAMESPACE", "$POD_UID"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
}
