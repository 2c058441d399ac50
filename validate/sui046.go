package validate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI046: a kubeflow operator Ingress aimed at a declared port.
var SUI046 = Rule{
	ID:       "SUI046",
	Severity: framework.Warning,
	Title:    "a kubeflow spark-operator Ingress reaches the driver through a declared port",
	Name:     "KubeflowIngressDeclaredPort",
	Catches: "For a kubeflow SparkApplication or ScheduledSparkApplication: a spec.driverIngressOptions entry whose servicePort is the declared UI port, " +
		"or an Ingress in the input that sends to the operator's UI Service " + names.KubeflowUIServicePattern + " (what the operator's --ingress-url-format Ingress <app>-ui-ingress does).",
	Why: "With --ingress-url-format (Helm controller.uiIngress.enable and urlFormat) the operator creates <app>-ui-ingress backed by <app>-ui-svc, whose targetPort is spark.ui.port " +
		"from spec.sparkConf or 4040 (internal/controller/sparkapplication/web_ui.go, getWebUITargetPort); a driverIngressOptions entry gets a Service targeting its servicePort. " +
		"Both are fixed at submission: when Spark binds another port (taken port, spark.ui.port=0, TLS) the link reaches nothing or another process. With a path in the URL format the " +
		"operator also overwrites spark.ui.proxyBase and spark.ui.proxyRedirectUri in the SparkApplication.",
	Fix: "Point the Ingress's backend at sparkui's UI Service (the name and port the message gives), or let sparkui write the route (spec.route in its functionConfig: an HTTPRoute or a controller-neutral Ingress), " +
		"and turn the operator's UI Ingress off (drop --ingress-url-format; Helm controller.uiIngress.enable=false) or remove the driverIngressOptions entry.",
	Failing: `spec:
  driverIngressOptions:
  - servicePort: 4040                 # SUI046: the declared UI port
    ingressURLFormat: "{{$appName}}.spark.example.com"
`,
	Passing: `spec:
  driverIngressOptions:
  - servicePort: 15002                # Spark Connect: a port that does not move
`,
	Check: checkSUI046,
}

func checkSUI046(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		// Scope: carriers whose operator makes Services from ingress options entries.
		optsPath := a.Carrier.FieldPath(app.FieldIngressOptions)
		if optsPath == nil {
			continue
		}
		target := sparkuiTarget(a)
		opts := yamlx.Get(a.Object.YNode(), optsPath...)
		for i, o := range yamlx.Items(opts) {
			n, ok := yamlx.Int(yamlx.Get(o, "servicePort"))
			if !ok || (a.Settings.UIPort != 0 && n != a.Settings.UIPort) {
				continue
			}
			out = append(out, Finding{Object: a.Object, Field: fieldpath.Key(fieldpath.Index(strings.Join(optsPath, "."), i), "servicePort"),
				Msg: fmt.Sprintf("the operator's driver ingress Service for this entry targets the declared port %d, not the port the UI bound: drop the entry and route to %s instead (sparkui's spec.route writes the route)", n, target)})
		}
		if len(ctx.Model.Ingresses) == 0 {
			continue
		}
		for _, opSvc := range sortedKeys(a.Carrier.OperatorServices()) {
			out = append(out, operatorUIIngresses(ctx, a, opSvc, target)...)
		}
	}
	return out
}

// operatorUIIngresses are the Ingresses of a's namespace that send to the operator's UI
// Service opSvc.
func operatorUIIngresses(ctx *Context, a *app.App, opSvc, target string) []Finding {
	var out []Finding
	for _, ing := range ctx.Model.Ingresses {
		ns, ingName := app.Meta(ing)
		if ns != a.Namespace {
			continue
		}
		for i, r := range yamlx.Items(yamlx.Get(ing.YNode(), "spec", "rules")) {
			for j, p := range yamlx.Items(yamlx.Get(r, "http", "paths")) {
				if yamlx.GetStr(p, "backend", "service", "name") != opSvc {
					continue
				}
				out = append(out, Finding{Object: ing, Field: "spec.rules[" + strconv.Itoa(i) + "].http.paths[" + strconv.Itoa(j) + "].backend.service.name",
					Msg: "Ingress " + ingName + " sends to the kubeflow operator's " + opSvc + ", which targets the declared spark.ui.port (else 4040), not the port the UI bound: point its backend at " + target +
						" and turn the operator's UI Ingress off (--ingress-url-format unset, Helm controller.uiIngress.enable=false)"})
			}
		}
	}
	return out
}

// sparkuiTarget names sparkui's UI Service and port for a message.
func sparkuiTarget(a *app.App) string {
	port := ""
	if a.UIService != nil {
		if ps := yamlx.Items(yamlx.Get(a.UIService.YNode(), "spec", "ports")); len(ps) > 0 {
			if p, ok := yamlx.Port(yamlx.Get(ps[0], "port")); ok {
				port = " port " + strconv.Itoa(p)
			}
		}
	}
	if a.UIService == nil {
		return sparkuiService(a)
	}
	return "sparkui's UI Service " + a.UIServiceName + port
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
