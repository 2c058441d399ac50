// Command kubectl-sparkui is the kubectl plugin `kubectl sparkui`: list the applications whose
// UI sparkui serves, open one through a port-forward, and say why one is not reachable. It
// reads what the function and the runtime left on the cluster (kubectlplugin/uistate) and
// writes nothing. docs/kubectl-plugin.md.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := NewRoot(streams).Execute(); err != nil {
		os.Exit(1)
	}
}
