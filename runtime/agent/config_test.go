package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/internal/sidecar"
)

func TestConfig(t *testing.T) {
	c := Config{Config: sidecar.Config{Service: "wc-ui-svc", AppID: "spark-1", UIPort: 4040, MaxRetries: 16},
		PodName: "p", PodNamespace: "ns", PodUID: "u"}
	c.defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if p := c.Ports(); len(p) != 17 || p[0] != 4040 || p[16] != 4056 {
		t.Errorf("ports %v", p)
	}
	if c.Role != "wc-ui-svc-binder" || c.PortName() != "spark-ui" || c.Selector["spark-role"] != "driver" || c.Selector["spark-app-selector"] != "spark-1" {
		t.Errorf("%+v", c)
	}
	c.TLS, c.SSLPort = true, 4440
	if p := c.Ports(); len(p) != 17 || p[0] != 4440 || p[16] != 4456 || c.PortName() != "https" {
		t.Errorf("TLS ports %v %s", p, c.PortName())
	}
	c.SSLPort = 0
	if p := c.Ports(); p != nil {
		t.Errorf("random secure port: %v", p)
	}
	// Spark's Utils.userPort wraps past 65535 to 1024.
	c.UIPort, c.MaxRetries, c.TLS = 65530, 8, false
	if p := fmt.Sprint(c.Ports()); p != "[65530 65531 65532 65533 65534 65535 1024 1025 1026]" {
		t.Errorf("wrapped ports %s", p)
	}
	if UserPort(65535, 1) != 1024 || UserPort(4040, 400) != 4440 || UserPort(65000, 1000) != 1488 {
		t.Error(UserPort(65535, 1), UserPort(4040, 400), UserPort(65000, 1000))
	}
	for _, bad := range []Config{
		{Config: sidecar.Config{UIPort: 80}},
		{Config: sidecar.Config{UIPort: 4040, TLS: true, SSLPort: 443}},
		{Config: sidecar.Config{UIPort: 65536}},
		{Config: sidecar.Config{SkipPorts: "7078,x"}},
		{Config: sidecar.Config{AuthBearerFile: "/a", AuthHeaderFile: "/b"}},
	} {
		bad.Service, bad.AppID, bad.PodName, bad.PodNamespace, bad.PodUID = "s", "a", "p", "n", "u"
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v): no error", bad.Config)
		}
	}
	// Each value is named with its flag.
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Config: sidecar.Config{UIPort: 80}}, "--ui-port 80: Spark accepts 0 (random) or 1024-65535"},
		{Config{Config: sidecar.Config{UIPort: 4040, SSLPort: 70000}}, "--ssl-ui-port 70000: Spark accepts 0 (random) or 1024-65535"},
		{Config{Config: sidecar.Config{MaxRetries: -1}}, "--max-retries -1: must be 0 or more"},
		{Config{Poll: time.Nanosecond}, "--poll-interval 1ns: must be at least 10ms"},
		{Config{Poll: -time.Second}, "--poll-interval -1s: must be at least 10ms"},
	} {
		c := tc.c
		c.Service, c.AppID, c.PodName, c.PodNamespace, c.PodUID = "s", "a", "p", "n", "u"
		if err := c.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	if err := CheckPoll(0); err == nil || err.Error() != "--poll-interval 0s: must be at least 10ms" {
		t.Errorf("CheckPoll(0) = %v", err)
	}
	err := (&Config{}).Validate()
	for _, want := range []string{"--service", "--app-id", "$POD_NAME", "$POD_NAMESPACE", "$POD_UID"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
}

// TestSharedServiceConfig: a run of a shared Service: the app id may be empty with a guard
// label, the selector comes from --selector, and a selector the kubelet could not expand, or
// expanded to an empty value, is refused.
func TestSharedServiceConfig(t *testing.T) {
	base := Config{Config: sidecar.Config{Service: "nightly-sparkui-ui-svc", UIPort: 4040, GuardLabel: "sparkui.dev/application=nightly",
		PodSelector: "batch.kubernetes.io/controller-uid=0b5f,sparkui.dev/application=nightly,spark-role=driver", NoOwnerReference: true},
		PodName: "p", PodNamespace: "ns", PodUID: "u"}
	c := base
	c.defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"batch.kubernetes.io/controller-uid": "0b5f", "sparkui.dev/application": "nightly", "spark-role": "driver"}
	if fmt.Sprint(c.Selector) != fmt.Sprint(want) {
		t.Errorf("selector %v, want %v", c.Selector, want)
	}
	for sel, why := range map[string]string{
		"spark-app-selector=$(SPARKUI_APP_ID),spark-role=driver": "unexpanded reference $(SPARKUI_APP_ID)",
		"spark-app-selector=,spark-role=driver":                  "empty key or value",
		"":                                                       "no --selector and an empty --app-id ($SPARKUI_APP_ID)",
	} {
		c := base
		c.PodSelector = sel
		c.defaults()
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "not binding a selector") {
			t.Errorf("selector %q: Validate() = %v, want it to say %q", sel, err, why)
		}
		if c.Selector != nil {
			t.Errorf("selector %q: defaults set %v", sel, c.Selector)
		}
	}
	c = base
	c.AppID = "$(SPARKUI_APP_ID)"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "unexpanded") {
		t.Errorf("app id %q: Validate() = %v", c.AppID, err)
	}
}

// TestHistoryConfig: a History Server URL the hand-off could not append to, or a redirector
// port that is not one, is a configuration error (the runtime idles and says why).
func TestHistoryConfig(t *testing.T) {
	base := Config{Config: sidecar.Config{Service: "wc-ui-svc", AppID: "spark-1"}, PodName: "p", PodNamespace: "ns", PodUID: "u",
		HistoryURL: "https://shs.example.com", RedirectorPort: 8080}
	if _, err := base.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		port int
		want string
	}{
		{"shs.example.com", 8080, "--history-url ($SPARKUI_HISTORY_URL): \"shs.example.com\" is not an absolute http or https URL"},
		{"https://shs.example.com/?x=1", 8080, "has a query"},
		{"https://shs.example.com", 0, "--redirector-port ($SPARKUI_REDIRECTOR_PORT): 0 is not a port in 1-65535"},
	} {
		c2 := base
		c2.HistoryURL, c2.RedirectorPort = c.url, c.port
		if _, err := c2.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %d: %v, want %q", c.url, c.port, err, c.want)
		}
	}
	// Without a URL the port is not used.
	c3 := base
	c3.HistoryURL, c3.RedirectorPort = "", 0
	if _, err := c3.Check(); err != nil {
		t.Error(err)
	}
}
