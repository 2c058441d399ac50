package validate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI001: a driver container declares containerPort: 0.
var SUI001 = Rule{
	ID:       "SUI001",
	Severity: framework.Error,
	Title:    "a driver container declares containerPort: 0",
	Name:     "ZeroContainerPort",
	Catches:  "A port of the driver container with containerPort 0: what spark-submit writes for spark.ui.port=0. (A containerPort that is missing or not an integer is SUI030: sparkui never drops it.)",
	Why:      "The API server rejects the whole Pod (422: `spec.containers[0].ports[2].containerPort: Required value`; a containerPort of 0 counts as missing), so the application never starts.",
	Fix:      "Remove that port entry: a random port cannot be declared. sparkui-fn (transform mode) drops it; with a fixed spark.ui.port, declare that port instead.",
	Failing: `apiVersion: v1
kind: Pod
metadata:
  labels: {spark-role: driver, spark-app-selector: spark-7e0d…}
spec:
  containers:
  - name: spark-kubernetes-driver
    ports:
    - {name: driver-rpc-port, containerPort: 7078}
    - {name: spark-ui, containerPort: 0}   # SUI001 spec.containers[0].ports[1].containerPort
`,
	Passing: `    ports:
    - {name: driver-rpc-port, containerPort: 7078}
    # spark.ui.port=0: the UI port is not declared (a fixed spark.ui.port may be)
`,
	Check:              checkSUI001,
	RefusedByAPIServer: "A Pod, or a workload's pod template, with containerPort 0 is refused by the API server's own validation (`containerPort: Required value`) before admission policies run; in an operator resource the driver Pod the operator creates is refused the same way.",
}

// checkSUI001: containerPort 0 is what spark.ui.port=0 writes; the API server rejects the Pod.
func checkSUI001(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		c := a.DriverContainerNode()
		for j, p := range yamlx.Items(yamlx.Get(c, "ports")) {
			if app.ZeroContainerPort(p) {
				out = append(out, Finding{Object: a.Object,
					Field: fmt.Sprintf("%s.ports[%d].containerPort", a.DriverContainerPath(), j),
					Msg:   fmt.Sprintf("driver container port %q has containerPort 0: the API server rejects the Pod (\"containerPort: Required value\")", yamlx.GetStr(p, "name"))})
			}
		}
	}
	return out
}
