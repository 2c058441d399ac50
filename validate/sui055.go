package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI055: an application has two sparkui routes of one kind.
var SUI055 = Rule{
	ID:       "SUI055",
	Severity: framework.Error,
	Title:    "an application has two sparkui routes of one kind",
	Name:     "DuplicateRoute",
	Catches: "Two route objects of one kind (HTTPRoute, GRPCRoute, Ingress, OpenShift Route) labelled as sparkui's for the same application: a copy under another name " +
		"(a rendered output kept next to its source, a rename), which sparkui would not write.",
	Why: "Applied, both exist and both route to the application's UI Service, one of them with stale values (an old prefix, host or port); where they match the same requests the " +
		"route implementation picks one, and a change of the route configuration reaches only the other. sparkui updates one route per kind and application.",
	Fix: "Keep one: sparkui-fn in transform mode keeps the one named like the UI Service (else the first in the input), so the object the cluster has under sparkui's name is " +
		"updated in place, removes the others from its output, saying so in a SUI055 info result, and a pruning apply deletes them; or delete the copy yourself.",
	Failing: `kind: HTTPRoute
metadata:
  name: pi-estimate-sparkui-ui-svc
  labels: {app.kubernetes.io/managed-by: sparkui, sparkui.dev/application: pi-estimate}
---
kind: HTTPRoute
metadata:
  name: pi-estimate-ui-old              # SUI055: a second one for the same application
  labels: {app.kubernetes.io/managed-by: sparkui, sparkui.dev/application: pi-estimate}
`,
	PassingNote: "One HTTPRoute (and at most one GRPCRoute) per application.",
	Check:       checkSUI055,
}

func checkSUI055(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		for _, rn := range a.ExtraRoutes {
			kind := yamlx.GetStr(rn.YNode(), "kind")
			kept := a.Routes[kind]
			msg := objName(rn) + " is a second sparkui " + kind + " for the application " + a.IdentityValue
			if kept != nil {
				msg += ", besides " + objName(kept)
			}
			out = append(out, Finding{Object: rn, Field: "metadata.name",
				Msg: msg + ": applied, both would route; keep one (transform mode keeps the one named like the UI Service)"})
		}
	}
	return out
}
