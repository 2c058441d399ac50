package validate

import (
	"fmt"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// checkSUI001: containerPort 0 is what spark.ui.port=0 writes; the API server rejects the Pod.
func checkSUI001(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		c := a.DriverContainerNode()
		for j, p := range yamlx.Items(yamlx.Get(c, "ports")) {
			if app.ZeroContainerPort(p) {
				out = append(out, Finding{Object: a.Pod,
					Field: fmt.Sprintf("%s.ports[%d].containerPort", a.DriverContainerPath(), j),
					Msg:   fmt.Sprintf("driver container port %q has containerPort 0 (or none): the API server rejects the Pod", yamlx.GetStr(p, "name"))})
			}
		}
	}
	return out
}
