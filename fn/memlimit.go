package main

import (
	"os"
	"runtime/debug"

	"github.com/sparkui/sparkui/internal/inputlimit"
)

// setMemoryLimit gives the garbage collector 85 % of the run's memory limit as its soft limit
// (runtime/debug.SetMemoryLimit), unless GOMEMLIMIT says otherwise. Go reads no cgroup memory
// limit by itself: with the default GOGC=100 the heap may grow to twice what is live before a
// collection, so a large input was killed at a limit its live data fitted in
// (docs/performance.md: 12,500 kubeflow applications peak at 1.66 GiB with a 1700MiB soft
// limit, where 10,000 reach 1.90 GiB without one). The memory is the one the input limits
// use (the cgroup's, else 4Gi, else --memory-limit or SPARKUI_MEMORY_LIMIT; 0: none): they
// admit an input whose live heap is estimated at up to 60 % of it, which without a soft limit
// could peak at twice that (4.1 GiB measured for 67 MB of short ConfigMap keys, "4Gi" allowed).
// A bad value is ignored here and reported by the run.
func setMemoryLimit(args []string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	lim, _ := inputlimit.FromEnv(os.Getenv, inputlimit.Detect(os.ReadFile))
	_, lim, _ = inputlimit.TakeFlags(args, lim)
	if lim.Memory > 0 {
		debug.SetMemoryLimit(lim.Memory / 100 * 85)
	}
}

// cgroupMemoryLimit is the cgroup's memory limit, which the input limits read too.
var cgroupMemoryLimit = inputlimit.CgroupMemory
