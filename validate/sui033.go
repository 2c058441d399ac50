package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI033: a user driver.lifecycle on a kubeflow application.
var SUI033 = Rule{
	ID:       "SUI033",
	Severity: framework.Error,
	Title:    "a kubeflow driver.lifecycle replaces the withdraw hook",
	Name:     "KubeflowDriverLifecycle",
	Catches:  "A kubeflow SparkApplication or ScheduledSparkApplication whose spec.driver.lifecycle holds anything but sparkui's preStop withdraw hook. On the webhook injection that is an error; on the template injection a warning.",
	Why:      "The operator's mutating webhook sets the Spark container's whole lifecycle to driver.lifecycle (internal/webhook/sparkpod_defaulter.go addPodLifeCycleConfig). On the webhook injection sparkui's preStop lives there, and a user preStop keeps it out (a user postStart alone is kept beside it, but a preStop of yours wins); on the template injection, wherever the webhook is installed (the v2.x chart default), driver.lifecycle replaces the lifecycle of the template's driver container, hook included. Without the hook the UI Service is withdrawn only after the driver got SIGTERM.",
	Fix:      "Remove spec.driver.lifecycle, or on the webhook injection chain the hooks: run /opt/sparkui/sparkui-runtime withdraw --socket=/opt/sparkui/runtime.sock --timeout=10s first in your preStop. On the template injection, put your hooks on the template's spark-kubernetes-driver container instead.",
	Failing: `spec:
  driver:
    lifecycle:
      preStop:
        exec: {command: [/bin/sh, -c, sleep 5]}   # SUI033 spec.driver.lifecycle
`,
	Passing: `spec:
  driver:
    lifecycle:
      preStop:
        exec:
          command: [/opt/sparkui/sparkui-runtime, withdraw, --socket=/opt/sparkui/runtime.sock, --timeout=10s]
`,
	Check: checkSUI033,
}

// checkSUI033: the carrier reports driver.lifecycle wherever it is set (app.Carrier
// UserLifecyclePath). On the webhook injection a preStop other than sparkui's is an error; on the
// template injection anything but sparkui's preStop alone is a warning (the webhook would put
// exactly the template's hook on the driver container).
func checkSUI033(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		// UserLifecyclePath is set only where a webhook can replace the driver's lifecycle.
		if a.Carrier.UserLifecyclePath == "" || !a.Settings.UIEnabled {
			continue
		}
		// spec.driver is the webhook injection's driver slot; on the template injection that slot is
		// the template's container, so read it on the other injection.
		dc := a.Carrier
		if !dc.ViaWebhook() {
			dc = dc.OtherInjection()
		}
		drv, _, _ := dc.Lookup(app.SlotDriverContainer)
		if a.Carrier.ViaWebhook() {
			l := yamlx.Get(drv, "lifecycle")
			if h := yamlx.Get(l, "preStop"); h == nil || app.IsOurPreStop(h) {
				continue
			}
			out = append(out, Finding{Object: a.Object, Field: a.Carrier.UserLifecyclePath + ".preStop",
				Msg: "driver.lifecycle has a preStop of its own: the operator's webhook makes it the Spark container's, and sparkui's withdraw hook is not installed; chain the hooks (run /opt/sparkui/sparkui-runtime withdraw first)"})
			continue
		}
		if onlyOurPreStop(yamlx.Get(drv, "lifecycle")) {
			continue
		}
		out = append(out, Finding{Object: a.Object, Field: a.Carrier.UserLifecyclePath, Severity: framework.Warning,
			Msg: "driver.lifecycle is set: wherever the operator's webhook is installed it replaces the lifecycle of the template's driver container, and sparkui's withdraw hook there is lost; put your hooks on the template's spark-kubernetes-driver container"})
	}
	return out
}

// onlyOurPreStop reports a lifecycle mapping whose only field is sparkui's withdraw preStop.
func onlyOurPreStop(lc *yaml.Node) bool {
	return lc != nil && lc.Kind == yaml.MappingNode && len(lc.Content) == 2 &&
		lc.Content[0].Value == "preStop" && app.IsOurPreStop(lc.Content[1])
}
