package main

import (
	"net"
	"os"
	"strings"
)

func netListenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }

// podEnviron is this process's environment without the SPARKUI_* variables the test harness
// sets (the Makefile exports SPARKUI_CACHE and SPARKUI_KUSTOMIZE for the tools): in a Pod the
// runtime's environment is the container's, and it reports every SPARKUI_* name it does not
// know (docs/runtime-contract.md), so a test must give it only the ones a test means.
func podEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SPARKUI_") {
			out = append(out, kv)
		}
	}
	return out
}
