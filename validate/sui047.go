package validate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI047: a Service selecting a driver has a port whose port is missing or not an integer.
var SUI047 = Rule{
	ID:       "SUI047",
	Severity: framework.Error,
	Title:    "a Service selecting a driver has a port that is missing or not an integer",
	Name:     "UnreadableServicePort",
	Catches:  "A port of a Service that selects a driver Pod whose port is missing or not an integer (\"http\", 9090.5; 9090.0 is the port 9090 to the API server).",
	Why:      "The API server rejects the Service (port is a required int32). sparkui drops a Service port only when it is the integer 0 (SUI002): it never takes an unreadable port for a 0 and deletes it, so this port is left as written and must be fixed by hand.",
	Fix:      "Give the port an integer port (1–65535), or remove the entry.",
	Failing: `apiVersion: v1
kind: Service
metadata: {name: wordcount-…-driver-svc}
spec:
  selector: {spark-app-selector: spark-7e0d…, spark-role: driver}
  ports:
  - {name: metrics, port: nine}   # SUI047 spec.ports[0].port
`,
	Passing: `  ports:
  - {name: metrics, port: 9090}
`,
	Check: checkSUI047,
}

// checkSUI047: transform drops only a real port 0 (app.ZeroServicePort), so an unreadable port
// survives it and is reported here, in both modes.
func checkSUI047(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		for _, svc := range a.Services {
			for j, p := range yamlx.Items(yamlx.Get(svc.YNode(), "spec", "ports")) {
				v, bad := app.UnreadableServicePort(p)
				if !bad {
					continue
				}
				what := "no port"
				if v != nil {
					what = fmt.Sprintf("port %q, not an integer", yamlx.Str(v))
				}
				out = append(out, Finding{Object: svc, Field: fmt.Sprintf("spec.ports[%d].port", j),
					Msg: fmt.Sprintf("Service port %q has %s: the API server rejects the Service; sparkui leaves the port as it is", yamlx.GetStr(p, "name"), what)})
			}
		}
	}
	return out
}
