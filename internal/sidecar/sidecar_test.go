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
