package validate

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// jwsFilter is Spark's own authentication filter (core's ui/JWSFilter.scala, Spark 4.0+): it
// answers 403 to a request without "Authorization: Bearer <JWS>".
const jwsFilter = "org.apache.spark.ui.JWSFilter"

// SUI024: the UI is behind an authentication filter and the runtime has no credential.
var SUI024 = Rule{
	ID:       "SUI024",
	Severity: framework.Warning,
	Title:    "the UI is behind spark.ui.filters and the runtime has no credential",
	Name:     "UIFiltersNeedCredential",
	Catches:  "An application that sets spark.ui.filters while its runtime is given no credential (no --auth-bearer-file or --auth-header-file).",
	Why:      "Spark's UI ACLs never refuse an anonymous request, but filters do, on /api/v1 too: Spark's JWSFilter answers 403 without a bearer token, SPNEGO 401, SSO filters redirect (302). The runtime proves the UI is this application's through that REST API, so it never binds, and says so once in its log and termination message.",
	Fix:      "Give the runtime a credential the filter accepts, from a Secret: spec.runtime.auth.bearerTokenSecret (a JWS for org.apache.spark.ui.JWSFilter) or spec.runtime.auth.headerSecret (one header line, e.g. a cookie or basic-auth Authorization); in the ConfigMap form authBearerSecret or authHeaderSecret: <secret>/<key>.",
	Failing: `kind: ConfigMap
data:
  spark.properties: |
    spark.ui.filters=org.apache.spark.ui.JWSFilter   # SUI024 (warning)
`,
	Passing: `# functionConfig
spec:
  runtime:
    auth:
      bearerTokenSecret: {name: spark-ui-jws, key: token}
`,
	Check: checkSUI024,
}

// checkSUI024: a filtered UI refuses the runtime's anonymous probes.
func checkSUI024(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		filterNames := sparkconf.Filters(a.Props)
		if !a.Settings.UIEnabled || len(filterNames) == 0 {
			continue
		}
		if _, c := RuntimeContainer(a); c != nil {
			var args []string
			for _, s := range yamlx.Items(yamlx.Get(c, "args")) {
				args = append(args, yamlx.Str(s))
			}
			if got, err := sidecar.ParseArgs(args); err == nil && (got.AuthBearerFile != "" || got.AuthHeaderFile != "") {
				continue
			}
		}
		jws := slices.Contains(filterNames, jwsFilter)
		need := "a credential the filter accepts: spec.runtime.auth.headerSecret (one header line such as a cookie or a basic-auth Authorization) or spec.runtime.auth.bearerTokenSecret"
		if jws {
			need = "a bearer token: spec.runtime.auth.bearerTokenSecret naming a Secret key that holds a JWS signed with the filter's spark.org.apache.spark.ui.JWSFilter.param.secretKey"
		}
		msg := sparkconf.KeyUIFilters + " puts the UI behind " + strings.Join(filterNames, ", ") +
			": such filters refuse the runtime's anonymous requests to Spark's REST API (403, 401 or a 302 to a login page): the runtime never binds the UI Service without " + need
		f := Finding{Object: a.Object, Msg: msg}
		if a.ConfSource == app.FromConfigMap && a.ConfigMap != nil {
			f = Finding{Object: a.ConfigMap, Field: DataKeyPath(names.SparkPropertiesKey), Msg: msg}
		}
		out = append(out, f)
	}
	return out
}
