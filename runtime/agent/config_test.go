package agent

import (
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/sidecar"
)

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
	if DefaultRole("x-ui-svc") != "x-ui-svc-binder" || DefaultRole("short") != "short-ui-svc-binder" {
		t.Error(DefaultRole("x-ui-svc"), DefaultRole("short"))
	}
}
