// Command pause is the node's sandbox image: it holds a Pod's namespaces until it is
// stopped, as Kubernetes' own pause container does (build/pause/linux/pause.c: wait for a
// signal, exit 0 on SIGINT or SIGTERM, reap children on SIGCHLD). Static Go, so the image
// has one file and is built without a container engine.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
