package validate

import (
	"github.com/sparkui/sparkui/internal/yamlx"
)

// checkSUI005: a UI Service of another IP family than the driver Service cannot reach the
// driver's address (or is refused on a single-stack cluster).
func checkSUI005(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || a.DriverService == nil {
			continue
		}
		ui := yamlx.Get(a.UIService.YNode(), "spec")
		drv := yamlx.Get(a.DriverService.YNode(), "spec")
		_, drvName := metaName(a.DriverService)
		for _, k := range []string{"ipFamilyPolicy", "ipFamilies"} {
			if !yamlx.Equal(yamlx.Get(ui, k), yamlx.Get(drv, k)) {
				out = append(out, Finding{Object: a.UIService, Field: "spec." + k,
					Msg: "spec." + k + " differs from the driver Service " + drvName + "'s: copy it"})
			}
		}
	}
	return out
}
