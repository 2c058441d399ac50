package main

import (
	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// The helps of sparkui-runtime and its verbs: each is the verb's --help and its section of
// docs/cli.md (TestCLIDoc).

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
		{Name: WaitURICommand, Short: "wait until the UI Service publishes its external URI and print it"},
		{Name: RedirectCommand, Short: "serve the redirects of handed-off UI Services to the History Server"},
		{Name: "version", Short: "print the version (also --version)"},
	},
	Examples: []string{
		"sparkui-runtime run --help",
		"sparkui-runtime wait-uri --namespace=spark-jobs --service=spark-pi-sparkui-ui-svc --timeout=10m",
	},
	Exit: []cli.Exit{
		{Code: exitOK, Meaning: "help or version printed"},
		{Code: exitUsage, Meaning: "no command, or an unknown one"},
	},
	See: "docs/cli.md, docs/runtime.md",
}

var runHelp = cli.Command{
	Path:  "sparkui-runtime run",
	Short: "the driver Pod's native sidecar: bind the UI Service to the live UI, withdraw it when the UI goes",
	Usage: []string{"sparkui-runtime run --service=NAME --app-id=ID [flags]"},
	Long: `Every flag can also be given as $SPARKUI_<FLAG> (upper case, dashes as underscores, e.g.
SPARKUI_POLL_INTERVAL); a flag on the command line wins. The Pod's identity comes from the
downward API: $POD_NAME, $POD_NAMESPACE, $POD_UID (and $HOST_IP for --external-uri=nodePort).
A configuration error is logged and written to the termination log, and the sidecar then
waits for SIGTERM instead of exiting into a restart loop.`,
	Examples: []string{
		"sparkui-runtime run --service=spark-pi-sparkui-ui-svc --guard-label=sparkui.dev/application=spark-pi \\",
		"    --selector=sparkui.dev/application=spark-pi,spark-role=driver --owner-reference=false --ui-port=4045",
	},
	Exit: []cli.Exit{
		{Code: exitOK, Meaning: "after SIGTERM, in every case (withdrawn, nothing to withdraw, not acknowledged in time, a configuration error): an exit code > 0 of a native sidecar marks an Apache-operator application Failed"},
	},
	See: "docs/runtime.md, runtime/README.md",
}

var withdrawHelp = cli.Command{
	Path:  "sparkui-runtime withdraw",
	Short: "ask the running sidecar to withdraw the UI Service now (the driver container's preStop hook)",
	Usage: []string{"sparkui-runtime withdraw [--socket=PATH] [--timeout=D]"},
	Examples: []string{
		"/opt/sparkui/sparkui-runtime withdraw --socket=/opt/sparkui/runtime.sock --timeout=10s",
	},
	Exit: []cli.Exit{
		{Code: exitOK, Meaning: "withdrawn: the API server acknowledged it"},
		{Code: exitFailed, Meaning: "not acknowledged within --timeout"},
		{Code: exitUsage, Meaning: "bad arguments"},
		{Code: exitUnreachable, Meaning: "no runtime listens on the socket"},
	},
	See: "runtime/README.md",
}

var waitURIHelp = cli.Command{
	Path:  "sparkui-runtime wait-uri",
	Short: "wait until the UI Service carries its external URI while bound, and print it",
	Usage: []string{"sparkui-runtime wait-uri --service=NAME [--namespace=NS] [--timeout=D] [--kubeconfig=FILE]"},
	Long: `Reads the Service with GET (200 ms doubling to 5 s, jittered): get on that Service is all it
needs. A Service that does not exist yet is waited for.`,
	Examples: []string{
		"sparkui-runtime wait-uri --namespace=spark-jobs --service=spark-pi-sparkui-ui-svc --timeout=10m",
	},
	Exit: []cli.Exit{
		{Code: exitOK, Meaning: "the URI, printed on stdout"},
		{Code: exitFailed, Meaning: "--timeout passed (stderr says what it last saw), or the API server refused the read (401/403)"},
		{Code: exitUsage, Meaning: "bad arguments"},
		{Code: exitWithdrawn, Meaning: "the UI Service is withdrawn (its selector has sparkui.dev/withdrawn)"},
		{Code: exitDeleted, Meaning: "the UI Service was seen, then deleted"},
		{Code: exitHandedOff, Meaning: "the UI Service is handed off to the History Server: its page (sparkui.dev/history-uri) on stdout"},
	},
	See: "docs/external-uri.md",
}

var redirectHelp = cli.Command{
	Path:  "sparkui-runtime redirect",
	Short: "the namespace's History Server redirector: sends users of a handed-off UI Service to its History Server page",
	Usage: []string{"sparkui-runtime redirect [--namespace=NS] [--redirector-port=PORT] [--health-port=PORT] [--kubeconfig=FILE]"},
	Long: `Every flag can also be given as $SPARKUI_<FLAG>, as for run. It takes where it may send users
from its own configuration, never from what a driver wrote on its Service.`,
	Examples: []string{
		"sparkui-runtime redirect --namespace=spark-jobs",
	},
	Exit: []cli.Exit{
		{Code: exitOK, Meaning: "stopped by SIGTERM"},
		{Code: exitFailed, Meaning: "could not serve"},
		{Code: exitUsage, Meaning: "bad arguments or environment"},
	},
	See: "docs/history.md",
}
