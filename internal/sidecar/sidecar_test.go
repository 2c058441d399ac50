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
