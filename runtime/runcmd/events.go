package runcmd

import (
	"log/slog"
	"os"
	"time"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/events"
	"github.com/sparkui/sparkui/runtime/verb"
)

// configErrorEvent records a ConfigError Event about the driver Pod when the runtime cannot
// run, where the Pod's identity (downward API) and an API server configuration are known and
// Events are not turned off; the returned function flushes it (call it before exiting). A
// recorder that cannot be built is only logged: the reason is in the termination log anyway.
func configErrorEvent(log *slog.Logger, kubeconfig, service string, noEvents bool, reason string) func() {
	id := events.Identity{Namespace: os.Getenv(sidecar.EnvPodNamespace), PodName: os.Getenv(sidecar.EnvPodName),
		PodUID: os.Getenv(sidecar.EnvPodUID), Service: service}
	if noEvents || id.Namespace == "" || id.PodName == "" {
		return func() {}
	}
	restCfg, err := verb.RestConfig(kubeconfig)
	if err != nil {
		return func() {}
	}
	restCfg.UserAgent = "sparkui-runtime/" + version.Version
	rec, err := events.New(restCfg, id, time.Now(), log)
	if err != nil {
		log.Debug("cannot record the configuration error as an Event", "err", err)
		return func() {}
	}
	rec.Warning(events.ReasonConfigError, "Configure", reason)
	return func() { rec.Shutdown(2 * time.Second) }
}
