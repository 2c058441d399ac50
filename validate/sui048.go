package validate

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI048: an Apache operator ingress or HTTPRoute entry aimed at a declared port.
var SUI048 = Rule{
	ID:       "SUI048",
	Severity: framework.Warning,
	Title:    "an Apache SparkApplication's driverServiceIngressList or driverHttpRouteList entry reaches the driver through a declared port",
	Name:     "ApacheRouteDeclaredPort",
	Catches: "An Apache SparkApplication (spark.apache.org/v1, v1beta1) whose spec.driverServiceIngressList or spec.driverHttpRouteList entry has a serviceSpec port " +
		"targeting the declared UI port (spark.ui.port, else 4040; any port when spark.ui.port=0).",
	Why: "The operator creates a Service from the entry's serviceSpec with the driver Pod's labels as selector and the ports as declared, and an Ingress or HTTPRoute to it " +
		"(spark-submission-worker's DriverServiceIngressUtils.buildIngressService; an Ingress without rules gets one to the Service's first port). The targetPort is fixed when the " +
		"manifests are written: when Spark binds another port (taken port, spark.ui.port=0, TLS) the route reaches nothing or another process.",
	Fix: "Drop the entry and let sparkui write the route to its UI Service (spec.route in its functionConfig: an HTTPRoute or a controller-neutral Ingress), or write your own Ingress/HTTPRoute " +
		"with the backend the message names.",
	Failing: `spec:
  driverHttpRouteList:
  - serviceSpec: {ports: [{name: ui, port: 80, targetPort: 4040}]}   # SUI048
`,
	Passing: `spec:
  driverGrpcRouteList: []             # routes go to sparkui's UI Service instead
`,
	Check: checkSUI048,
}

func checkSUI048(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		// Scope: carriers whose operator builds Services and routes from such lists.
		for _, list := range []struct{ field, what string }{{app.FieldServiceIngressList, "Ingress"}, {app.FieldHTTPRouteList, "HTTPRoute"}} {
			path := a.Carrier.FieldPath(list.field)
			if path == nil {
				continue
			}
			key, listPath := path[len(path)-1], strings.Join(path, ".")
			for i, e := range yamlx.Items(yamlx.Get(a.Object.YNode(), path...)) {
				for j, p := range yamlx.Items(yamlx.Get(e, "serviceSpec", "ports")) {
					field := fieldpath.Index(fieldpath.Key(fieldpath.Key(fieldpath.Index(listPath, i), "serviceSpec"), "ports"), j)
					n, ok := yamlx.Int(yamlx.Get(p, "targetPort"))
					if ok {
						field += ".targetPort"
					} else if n, ok = yamlx.Int(yamlx.Get(p, "port")); ok {
						field += ".port"
					}
					if !ok || (a.Settings.UIPort != 0 && n != a.Settings.UIPort) {
						continue
					}
					out = append(out, Finding{Object: a.Object, Field: field,
						Msg: fmt.Sprintf("the operator's %s for this %s entry reaches the driver on the declared port %d, not the port the UI bound: drop the entry and route to %s (sparkui's spec.route writes the route)", list.what, key, n, sparkuiTarget(a))})
				}
			}
		}
	}
	return out
}
