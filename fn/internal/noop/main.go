// Command noop is the floor sparkui-fn's start-up is measured against (fn/start_bench_test.go):
// a kyaml function that reads a ResourceList and writes it back unchanged, built the same way.
package main

import (
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
)

func main() {
	p := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	if err := command.Build(p, command.StandaloneEnabled, false).Execute(); err != nil {
		os.Exit(1)
	}
}
