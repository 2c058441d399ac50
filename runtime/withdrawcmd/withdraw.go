// Package withdrawcmd is `sparkui-runtime withdraw`, the driver container's preStop hook.
package withdrawcmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/control"
	"github.com/sparkui/sparkui/runtime/verb"
)

// Main is `sparkui-runtime withdraw`: it asks the sidecar over its socket to withdraw the UI
// Service and waits for the API server's acknowledgement.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sparkui-runtime withdraw", flag.ContinueOnError)
	w := sidecar.DefaultWithdraw()
	w.Flags(fs)
	if code, ok := cli.ParseGo(fs, Help, args, os.Stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 || w.Timeout <= 0 {
		fmt.Fprintln(stderr, "sparkui-runtime withdraw: takes only --socket and a positive --timeout"+cli.HelpHint)
		return verb.ExitUsage
	}
	start := time.Now()
	err := control.Withdraw(w.Socket, w.Timeout)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case err == nil:
		fmt.Fprintf(stderr, "sparkui-runtime withdraw: UI Service withdrawn (acknowledged by the API server in %s)\n", took)
		return verb.ExitOK
	case errors.Is(err, control.ErrUnreachable):
		fmt.Fprintf(stderr, "sparkui-runtime withdraw: %v (is the sparkui-runtime sidecar running?)\n", err)
		return verb.ExitUnreachable
	}
	fmt.Fprintf(stderr, "sparkui-runtime withdraw: after %s: %v\n", took, err)
	return verb.ExitFailed
}

// Help is `sparkui-runtime withdraw --help` and its section of docs/cli.md.
var Help = cli.Command{
	Path:  "sparkui-runtime withdraw",
	Short: "ask the running sidecar to withdraw the UI Service now (the driver container's preStop hook)",
	Usage: []string{"sparkui-runtime withdraw [--socket=PATH] [--timeout=D]"},
	Examples: []string{
		"/opt/sparkui/sparkui-runtime withdraw --socket=/opt/sparkui/runtime.sock --timeout=10s",
	},
	Exit: []cli.Exit{
		{Code: verb.ExitOK, Meaning: "withdrawn: the API server acknowledged it"},
		{Code: verb.ExitFailed, Meaning: "not acknowledged within --timeout"},
		{Code: verb.ExitUsage, Meaning: "bad arguments"},
		{Code: verb.ExitUnreachable, Meaning: "no runtime listens on the socket"},
	},
	See: "runtime/README.md",
}
