package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
)

// SUI045: a route prefix with a path segment "proxy" or "history".
var SUI045 = Rule{
	ID:       "SUI045",
	Severity: framework.Error,
	Title:    "the route's path prefix has a segment proxy or history, which Spark's UI scripts read as an app id",
	Name:     "RoutePrefixProxyHistorySegment",
	Catches:  "A UI Service whose route prefix (" + names.AnnotationRoutePrefix + ") has a path segment that is exactly proxy or history, e.g. /proxy/{name} or /spark/history.",
	Why: "Spark's ui/static/utils.js (getStandAloneAppId, createRESTEndPointForExecutorsPage, createTemplateURI) splits document.baseURI on / and, when a segment is \"proxy\" " +
		"(the standalone master's reverse proxy) or \"history\" (the History Server), takes the next segment as the application id and builds the REST and template URLs from it " +
		"(SPARK-34659, SPARK-39297). Under such a prefix the Executors page and the other script-built pages ask for the wrong application and stay empty.",
	Fix: "Choose a prefix without a proxy or history segment (e.g. /spark/{namespace}/{name}); segments that merely contain the words (sparkproxy, history-ui) are fine.",
	Failing: `metadata:
  annotations: {sparkui.dev/route-prefix: /proxy/pi}   # SUI045
`,
	Passing: `metadata:
  annotations: {sparkui.dev/route-prefix: /spark/analytics/pi}
`,
	Check: checkSUI045,
}

func checkSUI045(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		prefix, ok := a.RoutePrefix()
		if !ok {
			continue
		}
		for _, seg := range strings.Split(prefix, "/") {
			if seg == "proxy" || seg == "history" {
				out = append(out, Finding{Object: a.UIService, Field: fieldpath.Key("metadata.annotations", names.AnnotationRoutePrefix),
					Msg: "the route prefix " + prefix + " has the path segment " + seg + ": Spark's utils.js takes the segment after it as the application id, so the Executors page would query the wrong application; choose a prefix without a " + seg + " segment"})
				break
			}
		}
	}
	return out
}
