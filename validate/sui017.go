package validate

import (
	"strings"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// checkSUI017: the function leaves a user's own preStop hook in place; without sparkui's, the
// Service is withdrawn only when the runtime sees the UI go away, after the driver got
// SIGTERM, so a request can still reach a stopping UI.
func checkSUI017(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		c := a.DriverContainerNode()
		if h := yamlx.Get(c, "lifecycle", "preStop"); h != nil && !app.IsOurPreStop(h) {
			out = append(out, Finding{Object: a.Pod, Field: a.DriverContainerPath() + ".lifecycle.preStop",
				Msg: "the driver container has its own preStop hook, so sparkui's withdrawal hook is not installed: the UI Service is withdrawn only after the driver has stopped serving; chain the hook: run " + quote(strings.Join(sidecar.PreStopCommand(), " ")) + " first"})
		}
	}
	return out
}
