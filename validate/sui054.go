package validate

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI054: two applications' routes match the same requests.
var SUI054 = Rule{
	ID:       "SUI054",
	Severity: framework.Error,
	Title:    "two applications' routes match the same host and path prefix",
	Name:     "RouteOverlap",
	Catches: "sparkui routes of two applications that take the same requests: HTTPRoutes attached to one Gateway (or listener) with intersecting hostnames (none matches every host) " +
		"and the same PathPrefix, an HTTPRoute and a GRPCRoute of two applications on one host, Ingresses of one class with the same host and path, or OpenShift Routes with the same host and path. " +
		"Typically a pathPrefix without {name}, or one without {namespace} while applications of the same name run in two namespaces behind one Gateway.",
	Why: "Only one of them is served. For HTTPRoutes the Gateway API gives the tie to the oldest route, then the first by namespace/name (HTTPRouteRule matching precedence, " +
		"sigs.k8s.io/gateway-api apis/v1/httproute_types.go); a listener accepts only one of an HTTPRoute and a GRPCRoute whose hostnames intersect; an OpenShift router admits " +
		"the older Route of a host and path and marks the other HostAlreadyClaimed (openshift/router pkg/router/controller/unique_host.go), and by default admits a host's Routes " +
		"from one namespace only (a warning: the IngressController's routeAdmission.namespaceOwnership: InterNamespaceAllowed lifts it). The other application's UI is unreachable at its URL, and nothing fails at apply time.",
	Fix: "Make the route unique per application: put {name} (and {namespace}, where applications of one name run in several namespaces) in spec.route.pathPrefix or hostname.",
	Failing: `# functionConfig: route: {kind: HTTPRoute, pathPrefix: /spark/{name}, parentRefs: [{name: shared, namespace: gateway-system}]}
metadata: {name: etl, namespace: team-a}     # -> /spark/etl
---
metadata: {name: etl, namespace: team-b}     # -> /spark/etl too: SUI054
`,
	Passing: `# route: {kind: HTTPRoute, pathPrefix: /spark/{namespace}/{name}, …}: /spark/team-a/etl and /spark/team-b/etl
`,
	Notes: "Prefixes that are only nested (/spark and /spark/etl) are not reported: the longest prefix wins, so each UI keeps its own pages.",
	Check: checkSUI054,
}

// routeMatch is one host and path a route object takes requests for.
type routeMatch struct {
	app *app.App
	obj *yaml.RNode
	// family groups kinds that compete for one request: a Gateway's listener (HTTPRoute,
	// GRPCRoute), an ingress class, an OpenShift router.
	family string
	// attach is where it is attached: the Gateway (and listener), the ingress class.
	attach   []string
	ns       string
	host     string // "" matches every host
	path     string // "*" (a GRPCRoute) takes every request of its host
	field    string
	describe string
}

func checkSUI054(ctx *Context) []Finding {
	var all []routeMatch
	for _, a := range ctx.Model.Apps {
		for _, kind := range []string{"HTTPRoute", "GRPCRoute", "Ingress", "Route"} {
			if rn := a.Routes[kind]; rn != nil {
				all = append(all, routeMatches(a, kind, rn)...)
			}
		}
	}
	// Candidates only: entries with the same family, host and path, and those that match
	// every host or every path against the rest of their family; a thousand applications
	// would otherwise make half a million pairs.
	type pair struct{ i, j int }
	var pairs []pair
	exact := map[string][]int{}
	var wild []int
	for j, m := range all {
		if m.host == "" || m.path == "*" {
			wild = append(wild, j)
			continue
		}
		k := m.family + "\x00" + m.host + "\x00" + m.path
		if m.family == "openshift" {
			k = m.family + "\x00" + m.host // a host is claimed across paths (hostClaimed)
		}
		for _, i := range exact[k] {
			pairs = append(pairs, pair{i, j})
		}
		exact[k] = append(exact[k], j)
	}
	for _, w := range wild {
		for k := range all {
			if k != w && all[k].family == all[w].family {
				pairs = append(pairs, pair{min(k, w), max(k, w)})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if a.j != b.j {
			return a.j - b.j
		}
		return a.i - b.i
	})
	var out []Finding
	seen := map[[2]*yaml.RNode]bool{}
	for _, p := range pairs {
		x, y := all[p.i], all[p.j]
		if x.app == y.app || seen[[2]*yaml.RNode{x.obj, y.obj}] {
			continue
		}
		switch {
		case overlaps(x, y):
			out = append(out, Finding{Object: y.obj, Field: y.field,
				Msg: fmt.Sprintf("%s takes the same requests as %s (%s): only one is served and the other application's UI is unreachable at its URL; put {name} (and {namespace}) in spec.route.pathPrefix or hostname",
					objName(y.obj), objName(x.obj), y.describe)})
		case hostClaimed(x, y):
			out = append(out, Finding{Object: y.obj, Field: "spec.host", Severity: framework.Warning,
				Msg: fmt.Sprintf("%s and %s share the host %s from two namespaces: an OpenShift router admits only the older namespace's Routes for a host unless the IngressController's routeAdmission.namespaceOwnership is InterNamespaceAllowed; put {namespace} in spec.route.hostname, or allow it",
					objName(y.obj), objName(x.obj), y.host)})
		default:
			continue
		}
		seen[[2]*yaml.RNode{x.obj, y.obj}] = true
	}
	return out
}

func overlaps(x, y routeMatch) bool {
	if x.host != y.host && x.host != "" && y.host != "" {
		return false
	}
	if x.path != y.path && x.path != "*" && y.path != "*" {
		return false
	}
	for _, p := range x.attach {
		for _, q := range y.attach {
			if sameAttach(p, q) {
				return true
			}
		}
	}
	return false
}

// hostClaimed: an OpenShift router lets Routes of one host come from the namespace of its
// oldest Route only, unless ownership checks are off (openshift/router
// pkg/router/controller/unique_host.go: "multiple paths can be added from the namespace of the
// oldest route unless the ownership checks are disabled"; the rejected Route is marked
// HostAlreadyClaimed, "a route in another namespace holds <host>").
func hostClaimed(x, y routeMatch) bool {
	return x.family == "openshift" && y.family == "openshift" && x.host != "" && x.host == y.host && x.ns != y.ns
}

// sameAttach: a parentRef without a sectionName attaches to every listener of its Gateway.
func sameAttach(p, q string) bool {
	if p == q {
		return true
	}
	gp, lp := splitListener(p)
	gq, lq := splitListener(q)
	return gp == gq && (lp == "" || lq == "")
}

func splitListener(s string) (gateway, listener string) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '#' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// routeMatches reads the hosts and paths a route object of a matches.
func routeMatches(a *app.App, kind string, rn *yaml.RNode) []routeMatch {
	n := rn.YNode()
	ns, _ := app.Meta(rn)
	spec := yamlx.Get(n, "spec")
	var out []routeMatch
	add := func(family string, attach []string, host, path, field string) {
		d := "every host"
		if host != "" {
			d = "host " + host
		}
		if path != "*" {
			d += ", path prefix " + path
		}
		out = append(out, routeMatch{app: a, obj: rn, ns: ns, family: family, attach: attach, host: host, path: path, field: field, describe: d})
	}
	switch kind {
	case "HTTPRoute", "GRPCRoute":
		var parents []string
		for _, p := range yamlx.Items(yamlx.Get(spec, "parentRefs")) {
			if k := yamlx.GetStr(p, "kind"); k != "" && k != "Gateway" {
				continue
			}
			pns := yamlx.GetStr(p, "namespace")
			if pns == "" {
				pns = ns
			}
			parents = append(parents, pns+"/"+yamlx.GetStr(p, "name")+"#"+yamlx.GetStr(p, "sectionName"))
		}
		hosts := yamlx.Items(yamlx.Get(spec, "hostnames"))
		hostField := func(i int) string { return fmt.Sprintf("spec.hostnames[%d]", i) }
		if len(hosts) == 0 {
			hosts = []*yaml.Node{nil}
			hostField = func(int) string { return "" }
		}
		for hi, h := range hosts {
			host := yamlx.Str(h)
			if kind == "GRPCRoute" {
				add("gateway", parents, host, "*", hostField(hi))
				continue
			}
			for ri, r := range yamlx.Items(yamlx.Get(spec, "rules")) {
				matches := yamlx.Items(yamlx.Get(r, "matches"))
				if len(matches) == 0 {
					add("gateway", parents, host, "/", fmt.Sprintf("spec.rules[%d]", ri))
				}
				for mi, m := range matches {
					if t := yamlx.GetStr(m, "path", "type"); t != "" && t != "PathPrefix" {
						continue
					}
					p := yamlx.GetStr(m, "path", "value")
					if p == "" {
						p = "/"
					}
					add("gateway", parents, host, p, fmt.Sprintf("spec.rules[%d].matches[%d].path.value", ri, mi))
				}
			}
		}
	case "Ingress":
		class := []string{yamlx.GetStr(spec, "ingressClassName")}
		for ri, r := range yamlx.Items(yamlx.Get(spec, "rules")) {
			for pi, p := range yamlx.Items(yamlx.Get(r, "http", "paths")) {
				add("ingress", class, yamlx.GetStr(r, "host"), yamlx.GetStr(p, "path"), fmt.Sprintf("spec.rules[%d].http.paths[%d].path", ri, pi))
			}
		}
	case "Route":
		p := yamlx.GetStr(spec, "path")
		if p == "" {
			p = "/"
		}
		add("openshift", []string{""}, yamlx.GetStr(spec, "host"), p, "spec.host")
	}
	return out
}
