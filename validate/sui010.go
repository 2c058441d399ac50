package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI010: TLS is on but the UI Service is set up for plain HTTP.
var SUI010 = Rule{
	ID:       "SUI010",
	Severity: framework.Error,
	Title:    "TLS is on but the UI Service is set up for plain HTTP",
	Name:     "TLSPort",
	Catches:  "TLS is on for the UI (spark.ssl.ui.enabled, inherited from spark.ssl.enabled) but the UI Service port is not named https, or declares appProtocol: http.",
	Why:      "With TLS the plain-HTTP port only redirects to the HTTPS one; clients, Ingress controllers and service meshes that go by the port name or appProtocol speak plain HTTP to a TLS listener.",
	Fix:      "Name the port https and drop appProtocol: http (or set it to https); sparkui-fn does.",
	Failing: `kind: ConfigMap
data:
  spark.properties: |
    spark.ssl.enabled=true
---
kind: Service    # the UI Service
spec:
  ports: [{name: spark-ui, protocol: TCP, port: 4440}]   # SUI010 spec.ports[0].name
`,
	Passing: `  ports: [{name: https, protocol: TCP, port: 4440}]
`,
	Check: checkSUI010,
}

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
