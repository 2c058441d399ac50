package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
)

// SUI044: the route's prefix and Spark's proxy settings disagree.
var SUI044 = Rule{
	ID:       "SUI044",
	Severity: framework.Error,
	Title:    "the route's path prefix and spark.ui.proxyBase / spark.ui.proxyRedirectUri disagree",
	Name:     "RoutePrefixProxyBaseMismatch",
	Catches: "An application whose UI Service records a route prefix (" + names.AnnotationRoutePrefix + ") while its Spark conf has another spark.ui.proxyBase (the prefix, or none for \"/\"), " +
		"or a prefix other than \"/\" without spark.ui.proxyRedirectUri, or spark.ui.reverseProxy=true (SparkContext then replaces proxyBase with spark.ui.reverseProxyUrl + \"/proxy/<application id>\").",
	Why: "Spark serves its UI at the root whatever proxyBase says (JettyUtils.createServletHandler), and the route strips the prefix; proxyBase only prefixes the links Spark writes " +
		"(UIUtils.uiRoot/prependBaseUri). Another proxyBase sends every link and asset outside the route (404). Spark's redirects (/ to /jobs/, Jetty's trailing-slash ones) " +
		"carry the prefix only through ProxyRedirectHandler, which JettyUtils installs when spark.ui.proxyRedirectUri is set: without it the first page of the route redirects to /jobs/ at the host's root.",
	Fix: "Run sparkui-fn in transform mode with the same spec.route (it writes both properties where it can write the conf, and reports a SUI044 warning naming the old value " +
		"when it replaces a spark.ui.proxyBase it did not write), or set spark.ui.proxyBase=<prefix> and " +
		"spark.ui.proxyRedirectUri=/ (https://<host> behind TLS) yourself; for \"/\" remove spark.ui.proxyBase. Remove spark.ui.reverseProxy.",
	Failing: `metadata:
  annotations: {sparkui.dev/route-prefix: /spark/analytics/pi}   # UI Service
---
spec:
  sparkConf: {spark.ui.proxyBase: /pi}                            # SUI044
`,
	Passing: `spec:
  sparkConf: {spark.ui.proxyBase: /spark/analytics/pi, spark.ui.proxyRedirectUri: /}
`,
	Check: checkSUI044,
}

func checkSUI044(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		prefix, ok := a.RoutePrefix()
		if !ok || a.ConfError != nil {
			continue
		}
		want := prefix
		if prefix == "/" {
			want = ""
		}
		if a.Settings.ReverseProxy {
			obj, field := confLocation(a, sparkconf.KeyReverseProxy)
			base := strings.TrimSuffix(a.Props[sparkconf.KeyReverseProxyURL], "/") + "/proxy/<application id>"
			out = append(out, Finding{Object: obj, Field: field,
				Msg: "the route serves the UI under " + prefix + " but " + sparkconf.KeyReverseProxy + "=true makes Spark replace spark.ui.proxyBase with " + base +
					" when it starts (SparkContext), so every link Spark writes leaves the route; remove " + sparkconf.KeyReverseProxy + " (it is for a standalone master's proxy)"})
			continue
		}
		got, set := a.Props[sparkconf.KeyProxyBase]
		if !a.ConfWritable() && !set && want != "" {
			continue // SUI049: sparkui cannot write this conf
		}
		obj, field := confLocation(a, sparkconf.KeyProxyBase)
		switch {
		case got != want && want == "":
			out = append(out, Finding{Object: obj, Field: field,
				Msg: "the route serves the UI at the root but spark.ui.proxyBase is " + got + ": every link Spark writes would start with it and leave the route; remove it"})
		case got != want:
			is := "unset"
			if set {
				is = got
			}
			out = append(out, Finding{Object: obj, Field: field,
				Msg: "the route serves the UI under " + prefix + " (stripped before Spark) but spark.ui.proxyBase is " + is + ": Spark's links would miss the prefix; set it to " + prefix})
		case want != "" && a.Props[sparkconf.KeyProxyRedirectURI] == "":
			obj, field = confLocation(a, sparkconf.KeyProxyRedirectURI)
			out = append(out, Finding{Object: obj, Field: field,
				Msg: "the route serves the UI under " + prefix + " but spark.ui.proxyRedirectUri is unset: Spark's redirects (/ to /jobs/) would leave the prefix; set it to / (https://<host> where TLS ends before Spark)"})
		}
	}
	return out
}

// confLocation is the object and field where a's Spark property key is (or would be)
// written: the operator's sparkConf entry, the driver ConfigMap's spark.properties, else
// the carrier object itself.
func confLocation(a *app.App, key string) (*yaml.RNode, string) {
	if f := a.ConfField(key); f != "" {
		return a.Object, f
	}
	if a.ConfigMap != nil && a.ConfSource == app.FromConfigMap {
		return a.ConfigMap, fieldpath.Key("data", names.SparkPropertiesKey)
	}
	return a.Object, ""
}
