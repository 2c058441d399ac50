package sidecar

import (
	"flag"
	"io"
	"reflect"
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
		{Service: "pi-sparkui-ui-svc", AppIDLabel: "spark-app-selector", GuardLabel: "sparkui.dev/application=pi", UIPort: 4045, MaxRetries: 16},
		{Service: "nb-sparkui-ui-svc", AppID: "notebook-1", GuardLabel: "sparkui.dev/application=nb", UIPort: 4040, MaxRetries: 16},
		{Service: "job-sparkui-ui-svc", GuardLabel: "sparkui.dev/application=job", UIPort: 4040, MaxRetries: 16},
	} {
		got, err := ParseArgs(c.Args())
		if err != nil || got != c {
			t.Errorf("ParseArgs(Args(%+v)) = %+v, %v", c, got, err)
		}
	}
	if _, err := ParseArgs([]string{"run", "--guard-label=nokey"}); err == nil {
		t.Error("no error for a guard label without =")
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

// TestCarrierArgs pins the command line the function writes for each identity: the
// spark-submit form is unchanged, the others name where the id comes from and the guard.
func TestCarrierArgs(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want []string
	}{
		{Config{Service: "a-ui-svc", AppID: "spark-1", UIPort: 4040, MaxRetries: 16},
			[]string{"run", "--service=a-ui-svc", "--app-id=spark-1", "--ui-port=4040", "--max-retries=16", "--tls=false", "--host-network=false"}},
		{Config{Service: "pi-sparkui-ui-svc", AppIDLabel: "spark-app-selector", GuardLabel: "sparkui.dev/application=pi", UIPort: 4045, MaxRetries: 16},
			[]string{"run", "--service=pi-sparkui-ui-svc", "--app-id-from-label=spark-app-selector", "--guard-label=sparkui.dev/application=pi", "--ui-port=4045", "--max-retries=16", "--tls=false", "--host-network=false"}},
		{Config{Service: "j-sparkui-ui-svc", GuardLabel: "sparkui.dev/application=j", UIPort: 4040, MaxRetries: 16},
			[]string{"run", "--service=j-sparkui-ui-svc", "--guard-label=sparkui.dev/application=j", "--ui-port=4040", "--max-retries=16", "--tls=false", "--host-network=false"}},
	} {
		if got := tc.c.Args(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Args(%+v) =\n%q\nwant\n%q", tc.c, got, tc.want)
		}
	}
}
