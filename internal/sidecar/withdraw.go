package sidecar

import (
	"flag"
	"time"
)

// Withdraw is the settings of the `withdraw` command, which the driver container's preStop
// hook runs: ask the runtime listening on Socket to withdraw the UI Service and wait for the
// API server's acknowledgement, Timeout at most.
type Withdraw struct {
	Socket  string
	Timeout time.Duration
}

// DefaultWithdraw is what the preStop hook uses.
func DefaultWithdraw() Withdraw { return Withdraw{Socket: SocketPath, Timeout: WithdrawTimeout} }

// Flags registers w's fields on fs under their argument names.
func (w *Withdraw) Flags(fs *flag.FlagSet) {
	fs.StringVar(&w.Socket, "socket", w.Socket, "the runtime's unix socket")
	fs.DurationVar(&w.Timeout, "timeout", w.Timeout, "give up (exit non-zero) after this long without the acknowledgement")
}

// Args is the command line of `withdraw` with w (after the binary).
func (w Withdraw) Args() []string {
	return []string{WithdrawCommand, "--socket=" + w.Socket, "--timeout=" + w.Timeout.String()}
}

// PreStopCommand is the driver container's preStop exec: ask the runtime to withdraw and wait
// for the API server's answer, within a bound.
func PreStopCommand() []string {
	return append([]string{BinaryPath}, DefaultWithdraw().Args()...)
}

// IsWithdrawCommand reports whether a preStop exec command runs the runtime's withdrawal.
func IsWithdrawCommand(cmd []string) bool { return len(cmd) > 0 && cmd[0] == BinaryPath }
