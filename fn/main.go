// Command sparkui-fn is the KRM function: it reads a ResourceList on stdin and writes one on
// stdout (kustomize exec functions, kpt fn eval/render, plain pipelines). It exits 1 when
// any result is an error, after writing every item and result, and prints one line per
// error on stderr, which is all kustomize shows of a failing function.
package main

import (
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"

	"github.com/sparkui/sparkui/internal/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "validate" {
		return runValidate(args[1:], stdin, stdout, stderr)
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprintln(stdout, "sparkui-fn", version.Version)
		return 0
	}
	var results framework.Results
	p := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		err := Process(rl)
		results = rl.Results
		return err
	})
	cmd := command.Build(p, command.StandaloneEnabled, true)
	cmd.Use = "sparkui-fn"
	cmd.Short = "Make Spark driver manifests valid and wire a UI Service that is always right"
	cmd.Version = version.Version
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	if results.ExitCode() != 0 {
		for _, r := range results {
			if r.Severity == framework.Error {
				fmt.Fprintln(stderr, "sparkui-fn:", r.String())
			}
		}
		return 1
	}
	return 0
}
