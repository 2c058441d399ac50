package validate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

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
						Msg: fmt.Sprintf("Service port %q has port 0 (or none): the API server rejects the Service", name)})
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
