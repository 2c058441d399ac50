package validate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI002: a Service selecting a driver declares port: 0 or targetPort: 0.
var SUI002 = Rule{
	ID:       "SUI002",
	Severity: framework.Error,
	Title:    "a Service selecting a driver declares port: 0 or targetPort: 0",
	Name:     "ZeroServicePort",
	Catches:  "A port of a Service that selects a driver Pod with port 0, or with an explicit targetPort 0. (A port that is missing or not an integer is SUI047: sparkui never drops it.)",
	Why:      "The API server rejects the Service (422), so spark-submit fails to create the driver Service the executors reach the driver through, or the apply of the manifests fails.",
	Fix:      "Remove the port entry whose port is 0, and drop an explicit targetPort: 0 (it then defaults to the port). sparkui-fn (transform mode) does both; the UI is published by the UI Service instead.",
	Failing: `apiVersion: v1
kind: Service
metadata: {name: wordcount-…-driver-svc}
spec:
  clusterIP: None
  selector: {spark-app-selector: spark-7e0d…, spark-role: driver}
  ports:
  - {name: spark-ui, port: 0, targetPort: 0}   # SUI002 spec.ports[0].port and spec.ports[0].targetPort
`,
	Passing: `  ports:
  - {name: driver-rpc-port, port: 7078, targetPort: 7078}
  - {name: spark-ui, port: 4040}               # or no spark-ui entry at all
`,
	Check:              checkSUI002,
	RefusedByAPIServer: "A Service with port 0 or targetPort 0 is refused by the API server's own validation (`must be between 1 and 65535, inclusive`) before admission policies run.",
}

// checkSUI002: a Service port 0 (or explicit targetPort 0) is rejected by the API server.
func checkSUI002(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		svcs := a.Services
		if a.UIService != nil {
			svcs = append(append([]*yaml.RNode(nil), svcs...), a.UIService)
		}
		for _, svc := range svcs {
			for j, p := range yamlx.Items(yamlx.Get(svc.YNode(), "spec", "ports")) {
				name := yamlx.GetStr(p, "name")
				if app.ZeroServicePort(p) {
					out = append(out, Finding{Object: svc, Field: fmt.Sprintf("spec.ports[%d].port", j),
						Msg: fmt.Sprintf("Service port %q has port 0: the API server rejects the Service", name)})
				}
				if app.ZeroTargetPort(p) {
					out = append(out, Finding{Object: svc, Field: fmt.Sprintf("spec.ports[%d].targetPort", j),
						Msg: fmt.Sprintf("Service port %q has targetPort 0: the API server rejects the Service", name)})
				}
			}
		}
	}
	return out
}
