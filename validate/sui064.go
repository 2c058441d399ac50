package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI064: a UI reachable from outside with its kill links open and no authentication.
var SUI064 = Rule{
	ID:       "SUI064",
	Severity: framework.Warning,
	Title:    "a UI reachable from outside the cluster with its kill links open and no authentication",
	Name:     "ExposedKillLinks",
	Catches: "A route sparkui wrote for the UI (Gateway API HTTPRoute, Ingress, OpenShift Route) or a NodePort/LoadBalancer UI Service, while spark.ui.killEnabled is not false, " +
		"spark.ui.filters is not set, and the route shows no authentication: no HTTPRoute filter of type ExtensionRef (where implementations attach auth), no Ingress auth annotation " +
		"(ingress-nginx `nginx.ingress.kubernetes.io/auth-url`, `auth-type`; Traefik `traefik.ingress.kubernetes.io/router.middlewares`).",
	Why: "spark.ui.killEnabled defaults to true (Spark core config/UI.scala UI_KILL_ENABLED, since 1.0.0): the Jobs and Stages pages carry kill links, and the kill request is allowed when " +
		"SecurityManager.checkModifyPermissions passes, which it does when ACLs are off or the request has no user (core SecurityManager.scala: `!aclsEnabled || user == null` inline in older branches, first in isUserInACL in newer ones): without an authentication filter in spark.ui.filters " +
		"no request has a user, so spark.acls.enable alone protects nothing. Whoever reaches the route or node port can kill the application's jobs and stages.",
	Fix: "Set spark.ui.killEnabled=false, or put authentication in front: a filter in spark.ui.filters (with spark.acls.enable and spark.modify.acls for who may kill; runtime.auth gives the runtime its credential), " +
		"or auth at the gateway (an ExtensionRef auth filter on the HTTPRoute, an auth annotation on the Ingress, an oauth-proxy in front of an OpenShift Route's Service). docs/security.md.",
	Failing: `kind: Ingress            # sparkui's route to the UI Service
metadata:
  annotations: {}        # SUI064 (no auth annotation; spark.ui.killEnabled unset)
`,
	Passing: `spec:
  sparkConf:
    spark.ui.killEnabled: "false"
`,
	Notes: "An OpenShift Route has no authentication of its own: put oauth-proxy in front (a Route to the proxy's Service, not the UI Service) or turn the kill links off. " +
		"Auth the function cannot see (a Gateway-wide policy such as Envoy Gateway's SecurityPolicy, a service mesh) is not known here: set spark.ui.killEnabled=false to say the UI needs no kill links, which also silences the rule. " +
		"Not enforced at admission: it needs the route and the application's conf together.",
	Check: checkSUI064,
}

// ingressAuthAnnotations are the Ingress annotations that put authentication in front of the
// backend, as their projects document them (read 2026-12-06): ingress-nginx's external auth
// (kubernetes.github.io/ingress-nginx examples/auth/external-auth and oauth-external-auth:
// `auth-url`, with `auth-signin` for the login redirect) and basic/digest auth (`auth-type` with
// `auth-secret`, added in kubernetes-retired/contrib#946); Traefik's Kubernetes Ingress provider
// (doc.traefik.io routing-configuration/kubernetes/ingress, "On Ingress":
// `router.middlewares`, where forwardAuth, basicAuth and digestAuth middlewares are attached; a
// middleware list that authenticates nothing is still taken as auth: the function cannot read
// the Middleware objects, and a false warning there would teach users to ignore the rule).
var ingressAuthAnnotations = []string{
	"nginx.ingress.kubernetes.io/auth-url",
	"nginx.ingress.kubernetes.io/auth-type",
	"traefik.ingress.kubernetes.io/router.middlewares",
}

// checkSUI064: an exposed UI with kill links on and nothing that authenticates a request.
func checkSUI064(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Settings.UIEnabled || strings.EqualFold(strings.TrimSpace(a.Props["spark.ui.killEnabled"]), "false") ||
			strings.TrimSpace(a.Props["spark.ui.filters"]) != "" {
			continue
		}
		acls := ""
		if strings.EqualFold(strings.TrimSpace(a.Props["spark.acls.enable"]), "true") {
			acls = " (spark.acls.enable=true does not help without a filter: a request without a user passes checkModifyPermissions)"
		}
		fix := "; set spark.ui.killEnabled=false, add an authentication filter (spark.ui.filters), or authenticate at the gateway (docs/security.md)"
		for _, kind := range []string{"HTTPRoute", "Ingress", "Route"} {
			rn := a.Routes[kind]
			if rn == nil || routeHasAuth(kind, rn) {
				continue
			}
			out = append(out, Finding{Object: rn,
				Msg: "the " + kind + " publishes the Spark UI of " + objName(a.Object) + " with its kill links open (spark.ui.killEnabled defaults to true) and no authentication in front" + acls + fix})
		}
		if a.UIService != nil {
			if t := yamlx.GetStr(a.UIService.YNode(), "spec", "type"); t == "NodePort" || t == "LoadBalancer" {
				out = append(out, Finding{Object: a.UIService, Field: "spec.type",
					Msg: "the " + t + " UI Service publishes the Spark UI of " + objName(a.Object) + " outside the cluster with its kill links open (spark.ui.killEnabled defaults to true) and no authentication in front" + acls + fix})
			}
		}
	}
	return out
}

// routeHasAuth reports whether the route shows authentication the function can see.
func routeHasAuth(kind string, rn *yaml.RNode) bool {
	switch kind {
	case "HTTPRoute":
		// Gateway API has no core auth filter; implementations attach theirs as ExtensionRef
		// filters (Traefik middlewares, e.g. forwardAuth). Any ExtensionRef is taken as auth:
		// the function cannot tell what it does.
		for _, r := range yamlx.Items(yamlx.Get(rn.YNode(), "spec", "rules")) {
			for _, f := range yamlx.Items(yamlx.Get(r, "filters")) {
				if yamlx.GetStr(f, "type") == "ExtensionRef" {
					return true
				}
			}
		}
	case "Ingress":
		ann := rn.GetAnnotations()
		for _, k := range ingressAuthAnnotations {
			if strings.TrimSpace(ann[k]) != "" {
				return true
			}
		}
	}
	// An OpenShift Route has no authentication of its own.
	return false
}
