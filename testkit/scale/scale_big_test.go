//go:build scale

package scale

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// `make scale N=… [INTERVAL=…] [RESTART=…]`: not part of `make test` (the build tag keeps it out).
var (
	scaleN        = flag.Int("scale.n", 100, "applications per run")
	scaleInterval = flag.Duration("scale.interval", 50*time.Millisecond, "the trickle's interval between two starts")
	scaleStartup  = flag.Duration("scale.startup", 2*time.Second, "how long each stand-in UI answers \"starting up\"")
	scaleOut      = flag.String("scale.out", "", "also write the report to this file")
	scaleStarts   = flag.String("scale.starts", "burst,trickle", "which runs: burst, trickle or both")
	scaleRestart  = flag.Duration("scale.restart", 0, "kill kube-apiserver in the middle of each run's starts and start it again this long after (0: no restart)")
)

// TestScale runs N applications started in a burst, then N more in a steady trickle, on one
// control plane, each run ended by a burst of SIGTERMs, and reports both (docs/performance.md
// "At scale"). The goals TestScaleSmall asserts are asserted here too.
func TestScale(t *testing.T) {
	starts, err := parseStarts(*scaleStarts)
	if err != nil {
		t.Fatal(err)
	}
	bins := Build(t)
	c, audit := Cluster(t, nil)
	timeout := max(3*time.Minute, time.Duration(*scaleN)*600*time.Millisecond) + 2**scaleRestart
	report := fmt.Sprintf("sparkui scale run, %d CPUs, %s\n\n", runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	for _, run := range []struct {
		name     string
		interval time.Duration
	}{{"burst", 0}, {fmt.Sprintf("trickle (one start every %s)", *scaleInterval), *scaleInterval}} {
		if !starts[strings.Fields(run.name)[0]] {
			continue
		}
		ns := "scale-burst"
		first := 0
		if run.interval > 0 {
			ns, first = "scale-trickle", *scaleN
		}
		cfg := Config{N: *scaleN, First: first, Interval: run.interval, Startup: *scaleStartup, Timeout: timeout, RestartAPIServer: *scaleRestart}
		name := run.name
		if cfg.RestartAPIServer > 0 {
			name += fmt.Sprintf(", kube-apiserver killed for %s once a quarter is bound", cfg.RestartAPIServer)
		}
		r := Run(t, c, audit, bins, ns, cfg)
		report += r.Report(name) + "\n"
		checkGoals(t, r)
		if cfg.RestartAPIServer > 0 {
			checkRestart(t, r)
		}
		if t.Failed() {
			break
		}
	}
	t.Log("\n" + report)
	if *scaleOut != "" {
		if err := os.WriteFile(*scaleOut, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// parseStarts reads -scale.starts (STARTS=): a comma-separated subset of burst and trickle.
// Anything else is refused rather than silently running nothing and passing.
func parseStarts(v string) (map[string]bool, error) {
	starts := map[string]bool{}
	for _, s := range strings.Split(v, ",") {
		switch s = strings.TrimSpace(s); s {
		case "burst", "trickle":
			starts[s] = true
		default:
			return nil, fmt.Errorf("-scale.starts (STARTS) %q: %q is neither burst nor trickle", v, s)
		}
	}
	return starts, nil
}
