// Command sparkui-runtime is the companion that runs as a native sidecar in the Spark driver
// Pod and binds the UI Service to the port the UI really bound.
//
//	sparkui-runtime run --service=… --app-id=… [--ui-port=…] …   (the sidecar)
//	sparkui-runtime run --service=… --guard-label=… --selector=… --owner-reference=false …
//	                                                               (the sidecar, Service shared by runs)
//	sparkui-runtime withdraw [--socket=…] [--timeout=10s]          (the driver's preStop hook)
//	sparkui-runtime wait-uri --namespace=N --service=S [--timeout=5m]  (clients: print the external URI)
//	sparkui-runtime redirect [--namespace=N] [--redirector-port=8080] [--health-port=8081]
//	                                                               (the namespace's History Server redirector)
//	sparkui-runtime --version
//
// Every flag of run can also be given as an environment variable SPARKUI_<FLAG> (upper case,
// dashes as underscores, e.g. SPARKUI_POLL_INTERVAL); a flag on the command line wins.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/redirectcmd"
	"github.com/sparkui/sparkui/runtime/runcmd"
	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/runtime/waituricmd"
	"github.com/sparkui/sparkui/runtime/withdrawcmd"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stderr))
}

// Main runs the command line args and returns the exit code: it only chooses the verb, each of
// which is a package of its own.
func Main(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, rootHelp.Render(rootFlags))
		return verb.ExitUsage
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Println("sparkui-runtime", version.Version)
		return verb.ExitOK
	case sidecar.RunCommand:
		return runcmd.Main(args[1:], stderr)
	case sidecar.WithdrawCommand:
		return withdrawcmd.Main(args[1:], stderr)
	case waituricmd.Command:
		return waituricmd.Main(args[1:], os.Stdout, stderr)
	case redirectcmd.Command:
		return redirectcmd.Main(args[1:], stderr)
	case "-h", "--help", "-help", "help":
		fmt.Fprint(os.Stdout, rootHelp.Render(rootFlags))
		return verb.ExitOK
	}
	fmt.Fprintf(stderr, "sparkui-runtime: unknown command %q (--help lists the commands)\n", args[0])
	return verb.ExitUsage
}

// rootFlags are the flags of sparkui-runtime without a command.
var rootFlags = []cli.Flag{{Name: "version", Usage: "print the version and exit 0"}, cli.HelpFlag}

// rootHelp is `sparkui-runtime --help` and its section of docs/cli.md; each verb's is in its
// package (Help).
var rootHelp = cli.Command{
	Path:  "sparkui-runtime",
	Short: "binds a Spark driver's UI Service to the port its UI really bound",
	Usage: []string{
		"sparkui-runtime run --service=NAME --app-id=ID [flags]            the driver Pod's native sidecar",
		"sparkui-runtime run --service=NAME --guard-label=K=V --selector=K=V,... --owner-reference=false [flags]",
		"                                                                  the same, for a Service shared by successive runs",
		"sparkui-runtime withdraw [--socket=PATH] [--timeout=D]            the driver's preStop hook: withdraw now",
		"sparkui-runtime wait-uri --service=NAME [--namespace=NS]          for clients: wait for the UI's external URI, print it",
		"sparkui-runtime redirect [--namespace=NS]                         the namespace's History Server redirector",
		"sparkui-runtime version",
	},
	Long: `sparkui-fn writes the run and withdraw command lines into the driver Pod; wait-uri and
redirect are run by people and by Deployments. Flags take one or two dashes (--service=NAME,
-service=NAME) and a value after = or a space. Out of a cluster the runtime uses $KUBECONFIG
like kubectl; in a Pod, the in-cluster configuration.`,
	Commands: []cli.Sub{
		{Name: sidecar.RunCommand, Short: "run as the driver Pod's sidecar: find the UI, bind the UI Service, withdraw it before the port can serve anyone else"},
		{Name: sidecar.WithdrawCommand, Short: "ask the sidecar to withdraw the UI Service and wait for the API server's acknowledgement"},
		{Name: waituricmd.Command, Short: "wait until the UI Service publishes its external URI and print it"},
		{Name: redirectcmd.Command, Short: "serve the redirects of handed-off UI Services to the History Server"},
		{Name: "version", Short: "print the version (also --version)"},
	},
	Examples: []string{
		"sparkui-runtime run --help",
		"sparkui-runtime wait-uri --namespace=spark-jobs --service=spark-pi-sparkui-ui-svc --timeout=10m",
	},
	Exit: []cli.Exit{
		{Code: verb.ExitOK, Meaning: "help or version printed"},
		{Code: verb.ExitUsage, Meaning: "no command, or an unknown one"},
	},
	See: "docs/cli.md, docs/runtime.md",
}
