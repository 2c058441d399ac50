package validate

import (
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// checkSUI012: Spark keeps its Services when deleteOnTermination=false; a NodePort or
// LoadBalancer UI Service then holds a node port or a load balancer after the app is gone.
func checkSUI012(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || a.Settings.DeleteOnTermination {
			continue
		}
		if t := yamlx.GetStr(a.UIService.YNode(), "spec", "type"); t == "NodePort" || t == "LoadBalancer" {
			out = append(out, Finding{Object: a.UIService, Field: "spec.type",
				Msg: "a " + t + " UI Service with " + sparkconf.KeyDeleteOnTermination + "=false keeps its node port or load balancer after the application ends"})
		}
	}
	return out
}
