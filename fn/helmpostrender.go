package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// helmPostRenderer is the subcommand Helm 4 runs through the plugin in deploy/helm-plugin.
const helmPostRenderer = "helm-postrenderer"

// helmPostRendererHelp is `sparkui-fn helm-postrenderer --help` and its section of docs/cli.md.
var helmPostRendererHelp = cli.Command{
	Path:  "sparkui-fn " + helmPostRenderer,
	Short: "the Helm 4 post-renderer: rendered manifests on stdin, the function's output on stdout",
	Usage: []string{"sparkui-fn " + helmPostRenderer + " [CONFIG.yaml]"},
	Long: `What the sparkui Helm plugin (type postrenderer/v1, deploy/helm-plugin) runs: Helm writes
the chart's rendered manifests on standard input and reads the result on standard output.
CONFIG.yaml, the plugin's one argument (helm --post-renderer-args), is the functionConfig; none
means every default. Every result goes to stderr.

Helm 4 drops a post-renderer's stderr and says only that the plugin exited with error, so on
Linux, when Helm runs it (HELM_PLUGIN_NAME set), the error lines are also written to Helm's own
standard error, unless that is a file opened without append (the lines would be overwritten).
Anywhere, the same run outside Helm shows them:
  helm template NAME CHART | sparkui-fn CONFIG.yaml -`,
	Examples: []string{
		"helm template spark-jobs ./chart --post-renderer sparkui --post-renderer-args sparkui.yaml",
		"helm install spark-jobs ./chart --post-renderer sparkui --post-renderer-args \"$PWD/sparkui.yaml\"",
	},
	Exit: []cli.Exit{
		{Code: 0, Meaning: "no result of severity error"},
		{Code: 1, Meaning: "a result of severity error, unreadable input or CONFIG.yaml, or an input over a limit"},
		{Code: 2, Meaning: "a bad flag or more than one argument"},
	},
	See: "docs/deploy-helm.md, docs/configuration.md, docs/rules.md",
}

// runHelmPostRenderer is `sparkui-fn helm-postrenderer [CONFIG.yaml]`: standalone mode
// (`sparkui-fn CONFIG.yaml -`) or the plain stream (`sparkui-fn < manifests.yaml`) behind
// the interface of a Helm 4 postrenderer/v1 subprocess plugin. Helm appends the
// --post-renderer-args after the plugin's own arguments (helm.sh/helm/v4
// internal/plugin/subprocess_commands.go, PrepareCommands), so the config file comes last and
// a "-" cannot follow it: standard input is read here whatever the arguments.
func runHelmPostRenderer(args []string, stdin io.Reader, lim inputlimit.Limits, opts function.Options, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			io.WriteString(stdout, helmPostRendererHelp.Render([]cli.Flag{cli.HelpFlag}))
			return 0
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			fmt.Fprintf(stderr, "sparkui-fn %s: unknown flag %s%s\n", helmPostRenderer, a, cli.HelpHint)
			return 2
		}
	}
	if len(args) > 1 {
		fmt.Fprintf(stderr, "sparkui-fn %s: takes one functionConfig file, got %d arguments (%s)%s\n",
			helmPostRenderer, len(args), strings.Join(args, " "), cli.HelpHint)
		return 2
	}
	var diag bytes.Buffer
	code := helmPostRender(args, stdin, lim, opts, stdout, io.MultiWriter(stderr, &diag))
	if code != 0 {
		toHelmStderr(diag.Bytes())
	}
	return code
}

func helmPostRender(args []string, stdin io.Reader, lim inputlimit.Limits, opts function.Options, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sparkui-fn: "+format+"\n", a...)
		return 1
	}
	if stdin == nil {
		return fail("no standard input")
	}
	if len(args) == 1 {
		if err := krmio.CheckConfigFile(args[0], lim.ByteLimit()); err != nil {
			return fail("%v", err)
		}
	}
	// Read first to refuse what Helm never sends (a ResourceList, a List) and to pass an
	// empty render through; krmio then reads the same bytes within the same limit.
	data, err := lim.Budget().ReadAll("standard input", stdin)
	if err != nil {
		return fail("%v", err)
	}
	if !krmio.IsStream(data) {
		return notAStream(data, stderr)
	}
	r := &krmio.Reader{Stdin: bytes.NewReader(data), Budget: lim.Budget()}
	if len(args) == 1 {
		r.Args = []string{args[0], "-"}
	}
	return runKRM(r, opts, stdout, stderr)
}

// notAStream answers an input that is not a plain stream of objects. Helm sends nothing at all
// for a chart that renders no object: nothing comes back, and Helm reports the empty output
// itself (helm.sh/helm/v4 pkg/postrenderer/postrenderer.go). Anything else Helm never sends
// (it writes the rendered documents with kyaml, pkg/action/action.go annotateAndMerge).
func notAStream(data []byte, stderr io.Writer) int {
	if len(bytes.TrimSpace(data)) == 0 {
		return 0
	}
	if e := yamlx.CheckStream(data); e != nil {
		fmt.Fprintf(stderr, "sparkui-fn: standard input, %v\n", e)
		return 1
	}
	fmt.Fprintln(stderr, "sparkui-fn: standard input is not a stream of Kubernetes objects (a ResourceList or a List is not what Helm sends)")
	return 1
}
