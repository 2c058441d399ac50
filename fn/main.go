// Command sparkui-fn is the KRM function: it reads a ResourceList on stdin and writes one on
// stdout (kustomize exec functions, kpt fn eval/render, plain pipelines). It exits 1 when
// any result is an error, after writing every item and result, and prints one line per
// error on stderr, which is all kustomize shows of a failing function.
// `sparkui-fn validate` checks plain YAML and prints a report (package fn/validatecmd).
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
	"github.com/sparkui/sparkui/fn/validatecmd"
	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/internal/yamlx"
)

func main() {
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
	if len(args) == 0 && stdin != nil {
		data, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "sparkui-fn: reading standard input:", err)
			return 1
		}
		if items, ok := plainStream(data); ok {
			return runPlain(items, stdout, stderr)
		}
		out, results, ok, err := runResourceList(data)
		if ok {
			if err != nil {
				fmt.Fprintln(stderr, "sparkui-fn:", err)
				return 1
			}
			stdout.Write(out)
			return reportErrors(results, stderr)
		}
		if e := yamlx.CheckStream(data); e != nil {
			fmt.Fprintf(stderr, "sparkui-fn: standard input, %v\n", e)
			return 1
		}
		stdin = bytes.NewReader(data)
	}
	var results framework.Results
	p := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		err := function.Process(rl)
		results = rl.Results
		return err
	})
	cmd := command.Build(p, command.StandaloneEnabled, true)
	cmd.Use = "sparkui-fn"
	cmd.Short = "Make Spark driver manifests valid and wire a UI Service that is always right"
	cmd.Version = version.Version
	cmd.SetVersionTemplate("sparkui-fn {{.Version}}\n")
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetHelpCommand(&cobra.Command{Hidden: true})
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
	cmd.AddCommand(validatecmd.New(), &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(c *cobra.Command, _ []string) { fmt.Fprintln(c.OutOrStdout(), "sparkui-fn", version.Version) },
	})
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "validate" && args[0] != "version" && args[0] != "help" {
		if err := standaloneConfigError(args[0]); err != nil {
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
	return reportErrors(results, stderr)
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
