package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// The faults the node tests make the stand-in driver suffer or cause, each once per Pod when
// $FAKESPARK_CRASH_MARK names a file on a volume that outlives the container (the file is
// created first; a restarted container that finds it runs on):
//
//   - FAKESPARK_OOM_AFTER=<duration>: after it, log "oom <unix nanoseconds>" and allocate
//     memory, touching every page, until the kernel's OOM killer ends the process at the
//     container's memory limit (the kubelet then reports the container OOMKilled). Past
//     $FAKESPARK_OOM_MAX bytes (default 512 MiB) still alive, it logs "oom not killed" and
//     exits 3: the limit was not enforced, and the test must fail rather than eat the machine.
//   - FAKESPARK_EXIT_AFTER=<duration>: the application ends normally after it: the UI is
//     stopped first (SparkContext.stop stops the UI), "finished <unix nanoseconds>" is logged, and the
//     driver exits 0 — the run is over.
//
// And, every time: FAKESPARK_END_FILE=<path>: the application ends normally as above once the
// file exists (the test creates it on the container's emptyDir from the node's side: the run
// ends when the test says, not on a clock).
// conformance: node-faults
func startFaults(srv *fakespark.UI) {
	if end := os.Getenv("FAKESPARK_END_FILE"); end != "" {
		go func() {
			for {
				if _, err := os.Stat(end); err == nil {
					exitNormally(srv)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	mark := os.Getenv("FAKESPARK_CRASH_MARK")
	if mark != "" {
		if _, err := os.Stat(mark); err == nil {
			return
		}
	}
	once := func() {
		if mark != "" {
			_ = os.WriteFile(mark, nil, 0o644)
		}
	}
	if d, err := time.ParseDuration(os.Getenv("FAKESPARK_OOM_AFTER")); err == nil {
		max := int64(512 << 20)
		if v, err := strconv.ParseInt(os.Getenv("FAKESPARK_OOM_MAX"), 10, 64); err == nil && v > 0 {
			max = v
		}
		go func() {
			once()
			time.Sleep(d)
			fmt.Printf("oom %d\n", time.Now().UnixNano())
			allocate(max)
			fmt.Printf("oom not killed after %d bytes\n", max)
			os.Exit(3)
		}()
	}
	if d, err := time.ParseDuration(os.Getenv("FAKESPARK_EXIT_AFTER")); err == nil {
		go func() {
			once()
			time.Sleep(d)
			exitNormally(srv)
		}()
	}
}

// exitNormally ends the application: the UI stops, then the driver exits 0.
// conformance: stop-order
func exitNormally(srv *fakespark.UI) {
	// The tests time the withdrawal from this line (runtime/nodetest), so it comes first.
	fmt.Printf("finished %d\n", time.Now().UnixNano())
	srv.Close()
	os.Exit(0)
}

// held keeps what allocate made reachable, so the collector frees none of it.
var held [][]byte

// allocate grows the process's resident memory by up to max bytes, 1 MiB at a time, writing
// every page so the kernel charges it to the container's memory cgroup.
func allocate(max int64) {
	const chunk = 1 << 20
	for total := int64(0); total < max; total += chunk {
		b := make([]byte, chunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
}
