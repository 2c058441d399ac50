package validate

import (
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// checkSUI010: with TLS the plain port only redirects to the HTTPS one; a Service announced
// as plain HTTP sends clients (and Ingress controllers reading the port name) the wrong way.
func checkSUI010(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || !a.Settings.TLS {
			continue
		}
		for j, p := range yamlx.Items(yamlx.Get(a.UIService.YNode(), "spec", "ports")) {
			if name := yamlx.GetStr(p, "name"); name != names.UIPortNameTLS {
				out = append(out, Finding{Object: a.UIService, Field: "spec.ports[" + itoa(j) + "].name",
					Msg: "TLS is on (spark.ssl.ui.enabled) but the UI Service port is named " + quote(name) + ": name it " + quote(names.UIPortNameTLS) + ", it targets the HTTPS connector"})
			}
			if ap := yamlx.GetStr(p, "appProtocol"); ap == "http" {
				out = append(out, Finding{Object: a.UIService, Field: "spec.ports[" + itoa(j) + "].appProtocol",
					Msg: "TLS is on but the UI Service port declares appProtocol http"})
			}
		}
	}
	return out
}
