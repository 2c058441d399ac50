package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI017: the driver container has its own preStop hook.
var SUI017 = Rule{
	ID:       "SUI017",
	Severity: framework.Warning,
	Title:    "the driver container has its own preStop hook",
	Name:     "OwnPreStopHook",
	Catches:  "A driver container whose preStop hook is not sparkui's withdrawal hook (for a kubeflow SparkConnect: any preStop hook in the server container, which the operator replaces).",
	Why:      "sparkui-fn keeps the user's hook and installs none of its own: the UI Service is then withdrawn only when the runtime sees the UI go away, after the driver got SIGTERM, so requests can reach a stopping UI.",
	Fix:      "Chain the hooks: run /opt/sparkui/sparkui-runtime withdraw --socket=/opt/sparkui/runtime.sock --timeout=10s first in your own hook.",
	Failing: `kind: Pod
spec:
  containers:
  - name: spark-kubernetes-driver
    lifecycle:
      preStop:
        exec: {command: [/bin/sh, -c, sleep 5]}   # SUI017 spec.containers[0].lifecycle.preStop
`,
	Passing: `    lifecycle:
      preStop:
        exec:
          command: [/opt/sparkui/sparkui-runtime, withdraw, --socket=/opt/sparkui/runtime.sock, --timeout=10s]
`,
	Check: checkSUI017,
}

// checkSUI017: the function leaves a user's own preStop hook in place; without sparkui's, the
// Service is withdrawn only when the runtime sees the UI go away, after the driver got
// SIGTERM, so a request can still reach a stopping UI.
func checkSUI017(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		if a.Carrier.ViaWebhook() {
			continue // spec.driver.lifecycle: SUI033 reports it, as an error
		}
		c := a.DriverContainerNode()
		if h := yamlx.Get(c, "lifecycle", "preStop"); h != nil && !app.IsOurPreStop(h) && a.Carrier.OperatorOwnsLifecycle() {
			// kubeflow SparkConnect: the operator replaces the whole lifecycle
			// (internal/controller/sparkconnect/reconciler.go mutateServerPod), so chaining
			// cannot help and the hook itself never runs.
			out = append(out, Finding{Object: a.Object, Field: a.DriverContainerPath() + ".lifecycle.preStop",
				Msg: "the operator replaces this container's whole lifecycle with its own preStop hook: this one never runs, and no withdrawal hook can be added; the runtime withdraws when the UI goes away and on SIGTERM, after the driver has stopped serving"})
		} else if h != nil && !app.IsOurPreStop(h) {
			out = append(out, Finding{Object: a.Object, Field: a.DriverContainerPath() + ".lifecycle.preStop",
				Msg: "the driver container has its own preStop hook, so sparkui's withdrawal hook is not installed: the UI Service is withdrawn only after the driver has stopped serving; chain the hook: run " + quote(strings.Join(sidecar.PreStopCommand(), " ")) + " first"})
		}
	}
	return out
}
