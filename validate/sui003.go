package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SUI003: a UI Service exists while spark.ui.enabled=false.
var SUI003 = Rule{
	ID:       "SUI003",
	Severity: framework.Error,
	Title:    "a UI Service exists while spark.ui.enabled=false",
	Name:     "UIServiceWithoutUI",
	Catches:  "A sparkui UI Service for an application whose spark.ui.enabled is false.",
	Why:      "No UI will ever bind: the Service stays without endpoints for good, and whoever follows its name to the UI finds nothing; its Role, RoleBinding and runtime sidecar are dead weight.",
	Fix:      "Remove the UI Service, its Role and RoleBinding and the runtime sidecar (sparkui-fn in transform mode removes them and reports each removal as SUI003 info), or enable the UI again.",
	Failing: `apiVersion: v1
kind: ConfigMap            # mounted by the driver as spark-conf-volume-driver
data:
  spark.properties: |
    spark.ui.enabled=false
---
apiVersion: v1
kind: Service              # SUI003: a UI Service for an application without a UI
metadata:
  name: wordcount-…-ui-svc
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-7e0d…}
`,
	PassingNote: "The same ConfigMap, and no UI Service, Role, RoleBinding or `sparkui-runtime` sidecar for the application.",
	Check:       checkSUI003,
}

// checkSUI003: a UI Service for an application without a UI would never be bound, and its
// name would mislead anyone looking for the UI.
func checkSUI003(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Settings.UIEnabled && a.UIService != nil {
			out = append(out, Finding{Object: a.UIService,
				Msg: "UI Service for Pod " + a.DriverPodName + " exists but spark.ui.enabled=false: remove it"})
		}
	}
	return out
}
