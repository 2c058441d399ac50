package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI004: the UI Service has a selector in the manifests.
var SUI004 = Rule{
	ID:       "SUI004",
	Severity: framework.Error,
	Title:    "the UI Service has a selector in the manifests",
	Name:     "UIServiceSelector",
	Catches:  "A UI Service that declares a non-empty spec.selector in the manifests.",
	Why:      "The Service routes traffic as soon as it is applied, to whatever listens on the target port before the UI is up (under hostNetwork possibly another application's UI on the same node), and the runtime's guarded patch expects to set the selector itself.",
	Fix:      "Remove spec.selector: the runtime sets the selector and the targetPort in one patch once it has found this application's UI.",
	Failing: `apiVersion: v1
kind: Service
metadata:
  name: wordcount-…-ui-svc
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-7e0d…}
spec:
  selector: {spark-app-selector: spark-7e0d…, spark-role: driver}   # SUI004 spec.selector
  ports: [{name: spark-ui, protocol: TCP, port: 4040}]
`,
	Passing: "spec:\n  # no selector (an empty `selector: {}` is none too)\n  ports: [{name: spark-ui, protocol: TCP, port: 4040}]\n",
	Check:   checkSUI004,
	// On CREATE only: the runtime's bind is an update that sets the selector.
	Admission: []AdmissionPolicy{
		{Name: "ui-service", Group: "", Versions: []string{"v1"}, Resources: []string{"services"}, Operations: opCreate,
			ObjectLabels: map[string]string{names.LabelManagedBy: names.ManagedByValue},
			Conditions:   []AdmissionCondition{{"ui-service", celIsOurUIService}},
			Validations:  []string{`!has(object.spec.selector) || size(object.spec.selector) == 0`}},
	},
}

// checkSUI004: a selector in the manifests routes traffic before the UI has bound (to
// whatever listens on the front port, under hostNetwork possibly another application).
func checkSUI004(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		if sel := yamlx.Get(a.UIService.YNode(), "spec", "selector"); sel != nil && len(sel.Content) > 0 {
			out = append(out, Finding{Object: a.UIService, Field: "spec.selector",
				Msg: "the UI Service has a selector: it must start with none, the runtime sets it once the UI has bound"})
		}
	}
	return out
}
