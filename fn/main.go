// Command sparkui-fn is the KRM function: it reads a ResourceList on stdin and writes one on
// stdout (kustomize exec functions, kpt fn eval/render, plain pipelines). It exits 1 when
// any result is an error, after writing every item and result, and prints one line per
// error on stderr, which is all kustomize shows of a failing function.
// `sparkui-fn validate` checks plain YAML and prints a report (package fn/validatecmd);
// `sparkui-fn policy` prints the admission policies of the single-object rules (fn/policycmd).
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/fn/policycmd"
	"github.com/sparkui/sparkui/fn/validatecmd"
	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/version"
)

func main() {
	setMemoryLimit(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run writes stdout once, when the output is complete: a failure (or a kill) on the way leaves
// nothing on stdout rather than a document cut in the middle, which a pipeline would apply.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	code := runBuffered(args, stdin, &out, stderr)
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn: writing standard output:", err)
		return 1
	}
	return code
}

func runBuffered(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// `validate` takes the limits' flags among its own.
	lim := inputlimit.Detect(os.ReadFile)
	if len(args) == 0 || args[0] != "validate" {
		var err error
		if lim, err = inputlimit.FromEnv(os.Getenv, lim); err == nil {
			args, lim, err = inputlimit.TakeFlags(args, lim)
		}
		if err != nil {
			fmt.Fprintln(stderr, "sparkui-fn:", err)
			return 1
		}
	}
	budget := lim.Budget()
	opts := function.Options{}
	if len(args) > 0 && args[0] == helmPostRenderer {
		return runHelmPostRenderer(args[1:], stdin, lim, opts, stdout, stderr)
	}
	if len(args) == 0 && stdin != nil {
		return runKRM(&krmio.Reader{Stdin: stdin, Budget: budget}, opts, stdout, stderr)
	}
	// Everything else goes through cobra (help, flags, the subcommands); kyaml's command gives
	// the flags of its standalone mode, and krmio reads, as for standard input.
	code := 0
	cmd := command.Build(nil, command.StandaloneEnabled, true)
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		code = runKRM(&krmio.Reader{Stdin: stdin, Args: args, Budget: budget}, opts, stdout, stderr)
		return nil
	}
	cmd.Use = "sparkui-fn"
	cmd.Short = "Make Spark driver manifests valid and wire a UI Service that is always right"
	cmd.Version = version.Version
	cmd.SetVersionTemplate("sparkui-fn {{.Version}}\n")
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetHelpCommand(&cobra.Command{Hidden: true})
	// Read by inputlimit.TakeFlags before cobra parses anything; declared here for --help.
	cmd.Flags().String(inputlimit.MemoryFlag, "",
		"the memory one run may use (`bytes`, Ki, Mi, Gi; default the cgroup's limit, else 4Gi; 0: no limit; env "+inputlimit.MemoryEnv+
			"): an input whose estimate (~200 bytes a YAML node, ~5 a byte, ~100 KiB an application) is over 60 % of it is refused before it is parsed")
	cmd.Flags().String(inputlimit.BytesFlag, "",
		"read at most `bytes` of input (Ki, Mi, Gi; default what --memory-limit allows at ~5 bytes of memory a byte; 0: no limit; env "+inputlimit.BytesEnv+"): more is refused before it is parsed")
	cmd.Flags().String(inputlimit.AppsFlag, "",
		"rewrite at most `n` applications in one transform run (default what --memory-limit allows; 0: no limit; env "+inputlimit.AppsEnv+")")
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	cmd.InitDefaultVersionFlag()
	if f := cmd.Flags().Lookup("version"); f != nil {
		f.Usage = "print the version and exit 0"
	}
	setHelp(cmd, rootHelp)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%v%s", err, cli.HelpHint)
	})
	cmd.AddCommand(validatecmd.New(), policycmd.New(), &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(c *cobra.Command, _ []string) { fmt.Fprintln(c.OutOrStdout(), "sparkui-fn", version.Version) },
	})
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "validate" && args[0] != "policy" && args[0] != "version" && args[0] != "help" {
		if err := krmio.CheckConfigFile(args[0], lim.ByteLimit()); err != nil {
			fmt.Fprintln(stderr, "sparkui-fn:", err)
			return 1
		}
	}
	if len(args) > 0 && args[0] == "validate" {
		args = append(args[:1:1], validatecmd.NormalizeArgs(args[1:])...)
	}
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		var code validatecmd.ExitCode
		if errors.As(err, &code) {
			return int(code)
		}
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	return code
}

// reportAll prints every result, one line each, on stderr and returns the exit status: the
// output form has no place for them (a plain stream, a v1 List), so this is the only place
// warnings and infos are seen.
func reportAll(results framework.Results, stderr io.Writer) int {
	for _, r := range results {
		fmt.Fprintln(stderr, "sparkui-fn:", r.String())
	}
	if results.ExitCode() != 0 {
		return 1
	}
	return 0
}

// reportErrors prints one line per error result, which is all kustomize shows of a failing
// function, and is the exit status.
func reportErrors(results framework.Results, stderr io.Writer) int {
	if results.ExitCode() == 0 {
		return 0
	}
	for _, r := range results {
		if r.Severity == framework.Error {
			fmt.Fprintln(stderr, "sparkui-fn:", r.String())
		}
	}
	return 1
}

// runKRM is the function over one input, in whatever form r reads it: read, run, write back in
// the same form, then the results on stderr (all of them unless the output carries them).
func runKRM(r *krmio.Reader, opts function.Options, stdout, stderr io.Writer) int {
	opts.Applications = r.Budget.Applications // what the input read leaves for their output
	items, err := r.Read()
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: r.FunctionConfig}
	if err := function.Run(rl, r.Held, opts); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	w := &krmio.Writer{Reader: r, Results: rl.Results}
	if err := w.Write(rl.Items); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	stdout.Write(w.Bytes())
	if r.ResultsInOutput() {
		return reportErrors(rl.Results, stderr)
	}
	return reportAll(rl.Results, stderr)
}
