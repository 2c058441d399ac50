package validate

import "github.com/sparkui/sparkui/internal/yamlx"

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
