package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
)

// SUI049: the route needs Spark conf sparkui cannot write.
var SUI049 = Rule{
	ID:       "SUI049",
	Severity: framework.Warning,
	Title:    "the route needs spark.ui.proxyBase and spark.ui.proxyRedirectUri in a conf sparkui cannot write",
	Name:     "RouteConfNotWritable",
	Catches: "An application with a route prefix other than \"/\" (" + names.AnnotationRoutePrefix + ") whose Spark conf is not in the input as one field sparkui can edit " +
		"(a workload's --conf arguments or mounted spark-defaults.conf, a driver Pod whose ConfigMap is not in the input) and lacks spark.ui.proxyBase.",
	Why: "Without spark.ui.proxyBase Spark writes its links at the root. Through an HTTPRoute they still come out right, since the route sets X-Forwarded-Context, which UIUtils.uiRoot " +
		"uses when the system property is unset, but Spark's redirects (/ to /jobs/) need spark.ui.proxyRedirectUri, and an OpenShift Route's links need proxyBase.",
	Fix: "Add --conf spark.ui.proxyBase=<prefix> --conf spark.ui.proxyRedirectUri=/ to the driver's spark-submit (or the mounted spark-defaults.conf, or the session's conf before the SparkContext starts).",
	Failing: `kind: StatefulSet          # a Spark Connect server, conf in its args
# UI Service: sparkui.dev/route-prefix: /connect      # SUI049: no spark.ui.proxyBase
`,
	Passing: `args: [--conf, spark.ui.proxyBase=/connect, --conf, spark.ui.proxyRedirectUri=/]
`,
	Check: checkSUI049,
}

func checkSUI049(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		prefix, ok := a.RoutePrefix()
		if !ok || prefix == "/" || a.ConfWritable() {
			continue
		}
		if _, set := a.Props[sparkconf.KeyProxyBase]; set {
			continue // SUI044 compares it
		}
		out = append(out, Finding{Object: a.Object,
			Msg: "the route serves the UI under " + prefix + " but sparkui cannot write this application's Spark conf: add --conf " + sparkconf.KeyProxyBase + "=" + prefix +
				" --conf " + sparkconf.KeyProxyRedirectURI + "=/ to the driver's spark-submit (or its spark-defaults.conf), or Spark's redirects and an OpenShift Route's links leave the prefix"})
	}
	return out
}
