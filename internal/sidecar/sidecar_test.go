package sidecar

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPreStopCommand(t *testing.T) {
	want := []string{"/opt/sparkui/sparkui-runtime", "withdraw", "--socket=/opt/sparkui/runtime.sock", "--timeout=10s"}
	if got := PreStopCommand(); !reflect.DeepEqual(got, want) {
		t.Errorf("PreStopCommand() = %q, want %q", got, want)
	}
}

func TestWithdrawFlagsRoundTrip(t *testing.T) {
	in := Withdraw{Socket: "/tmp/x.sock", Timeout: 1500 * time.Millisecond}
	args := in.Args()
	if args[0] != WithdrawCommand {
		t.Fatalf("args %q", args)
	}
	out := DefaultWithdraw()
	fs := flag.NewFlagSet("withdraw", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out.Flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
}

func TestConfigArgsRoundTrip(t *testing.T) {
	for _, c := range []Config{
		{Service: "a-ui-svc", AppID: "spark-1", UIPort: 0, MaxRetries: 16, HostNetwork: true},
		{Service: "a-ui-svc", AppID: "spark-1", UIPort: 4040, MaxRetries: 3, TLS: true, SSLPort: 4440},
		{Service: "a-ui-svc", AppID: "spark-1", UIPort: 4040, MaxRetries: 16, SkipPorts: "7078,7079",
			UIFilters: "org.apache.spark.ui.JWSFilter", AuthBearerFile: "/var/run/sparkui/token", AuthHeaderFile: "/var/run/sparkui/header"},
		{Service: "nightly-sparkui-ui-svc", UIPort: 4040, MaxRetries: 16, GuardLabel: "sparkui.dev/application=nightly",
			PodSelector: "spark-app-selector=$(SPARKUI_APP_ID),spark-role=driver", NoOwnerReference: true},
	} {
		got, err := ParseArgs(c.Args())
		if err != nil || got != c {
			t.Errorf("ParseArgs(Args(%+v)) = %+v, %v", c, got, err)
		}
	}
	if _, err := ParseArgs([]string{"withdraw"}); err == nil {
		t.Error("no error for args that are not run's")
	}
}

func TestDefaultRole(t *testing.T) {
	for svc, want := range map[string]string{"x-ui-svc": "x-ui-svc-binder", "short": "short-ui-svc-binder"} {
		if got := DefaultRole(svc); got != want {
			t.Errorf("DefaultRole(%q) = %q, want %q", svc, got, want)
		}
	}
}

func TestPortName(t *testing.T) {
	if PortName(false) != "spark-ui" || PortName(true) != "https" {
		t.Errorf("PortName(false), PortName(true) = %q, %q", PortName(false), PortName(true))
	}
}

func TestIsWithdrawCommand(t *testing.T) {
	if !IsWithdrawCommand(PreStopCommand()) {
		t.Error("the preStop command is not recognised as the withdrawal")
	}
	for _, cmd := range [][]string{nil, {"/bin/sh", "-c", BinaryPath + " withdraw"}} {
		if IsWithdrawCommand(cmd) {
			t.Errorf("IsWithdrawCommand(%q) = true", cmd)
		}
	}
}

func TestResolvesURI(t *testing.T) {
	for mode, want := range map[ExternalURIMode]bool{ExternalURINone: false, ExternalURIAnnotation: false, ExternalURINodePort: true, ExternalURILoadBalancer: true, "": false} {
		if ResolvesURI(mode) != want {
			t.Errorf("ResolvesURI(%q) = %v", mode, !want)
		}
	}
}

func TestNewFlagsArgs(t *testing.T) {
	c := Config{Service: "a-ui-svc", AppID: "spark-1", UIPort: 4040, MaxRetries: 16, SkipPorts: "7078,7079",
		UIFilters: "org.apache.spark.ui.JWSFilter", AuthBearerFile: "/b", AuthHeaderFile: "/h"}
	want := []string{"run", "--service=a-ui-svc", "--app-id=spark-1", "--ui-port=4040", "--max-retries=16", "--tls=false",
		"--host-network=false", "--skip-ports=7078,7079", "--ui-filters=org.apache.spark.ui.JWSFilter",
		"--auth-bearer-file=/b", "--auth-header-file=/h"}
	if got := c.Args(); !reflect.DeepEqual(got, want) {
		t.Errorf("Args() = %q, want %q", got, want)
	}
}

func TestParsePorts(t *testing.T) {
	got, err := ParsePorts(" 7078, 7079,,")
	if err != nil || !reflect.DeepEqual(got, []int{7078, 7079}) || FormatPorts(got) != "7078,7079" {
		t.Errorf("ParsePorts = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "65536", "x", "7078,-1"} {
		if _, err := ParsePorts(bad); err == nil {
			t.Errorf("ParsePorts(%q): no error", bad)
		}
	}
	if got, err := ParsePorts(""); err != nil || got != nil {
		t.Errorf("ParsePorts(\"\") = %v, %v", got, err)
	}
}

// TestConfigArgsSharedService: the arguments of a runtime sharing one Service between runs,
// exactly; and those of a spark-submit Pod unchanged (no new flag when the new fields are empty).
func TestConfigArgsSharedService(t *testing.T) {
	shared := Config{Service: "nightly-sparkui-ui-svc", UIPort: 4040, MaxRetries: 16, GuardLabel: "sparkui.dev/application=nightly",
		PodSelector: "spark-app-selector=$(SPARKUI_APP_ID),spark-role=driver", NoOwnerReference: true}
	want := []string{"run", "--service=nightly-sparkui-ui-svc", "--ui-port=4040", "--max-retries=16", "--tls=false", "--host-network=false",
		"--guard-label=sparkui.dev/application=nightly", "--selector=spark-app-selector=$(SPARKUI_APP_ID),spark-role=driver", "--owner-reference=false"}
	if got := shared.Args(); !reflect.DeepEqual(got, want) {
		t.Errorf("Args() = %q, want %q", got, want)
	}
	old := Config{Service: "a-ui-svc", AppID: "spark-1", UIPort: 0, MaxRetries: 16}
	want = []string{"run", "--service=a-ui-svc", "--app-id=spark-1", "--ui-port=0", "--max-retries=16", "--tls=false", "--host-network=false"}
	if got := old.Args(); !reflect.DeepEqual(got, want) {
		t.Errorf("Args() = %q, want %q", got, want)
	}
	// --owner-reference alone, =true and =false.
	for args, want := range map[string]bool{"--owner-reference": false, "--owner-reference=true": false, "--owner-reference=false": true} {
		c, err := ParseArgs([]string{"run", args})
		if err != nil || c.NoOwnerReference != want {
			t.Errorf("ParseArgs(%q): NoOwnerReference %v, %v; want %v", args, c.NoOwnerReference, err, want)
		}
	}
	if _, err := ParseArgs([]string{"run", "--owner-reference=maybe"}); err == nil {
		t.Error("no error for --owner-reference=maybe")
	}
}

func TestParseSelector(t *testing.T) {
	got, err := ParseSelector("spark-app-selector=spark-5e1f, spark-role = driver,sparkui.dev/application=nightly")
	want := map[string]string{"spark-app-selector": "spark-5e1f", "spark-role": "driver", "sparkui.dev/application": "nightly"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSelector = %v, %v; want %v", got, err, want)
	}
	for in, why := range map[string]string{
		"spark-app-selector=$(SPARKUI_APP_ID),spark-role=driver": "unexpanded reference $(SPARKUI_APP_ID)",
		"batch.kubernetes.io/controller-uid=$(UID)":              "unexpanded reference $(UID)",
		"spark-app-selector=,spark-role=driver":                  "empty key or value",
		"=x":                                                     "empty key or value",
		"":                                                       "empty selector",
		"spark-role":                                             "not key=value",
		"spark-role=driver,spark-role=executor":                  "given twice",
		"spark-role=not valid":                                   "value \"not valid\"",
		"bad key=x":                                              "key \"bad key\"",
	} {
		if _, err := ParseSelector(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseSelector(%q): %v, want an error saying %q", in, err, why)
		}
	}
}

func TestParseLabel(t *testing.T) {
	if k, v, err := ParseLabel("sparkui.dev/application=nightly"); k != "sparkui.dev/application" || v != "nightly" || err != nil {
		t.Errorf("ParseLabel = %q, %q, %v", k, v, err)
	}
	for _, in := range []string{"sparkui.dev/application", "sparkui.dev/application=", "=x", "a=$(X)", "a=b=c"} {
		if _, _, err := ParseLabel(in); err == nil {
			t.Errorf("ParseLabel(%q): no error", in)
		}
	}
}

func TestAppIDFieldPath(t *testing.T) {
	if AppIDFieldPath != "metadata.labels['spark-app-selector']" {
		t.Errorf("AppIDFieldPath = %q", AppIDFieldPath)
	}
}
