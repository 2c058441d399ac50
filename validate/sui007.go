package validate

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI007: the driver's ServiceAccount lacks get or patch on the UI Service.
var SUI007 = Rule{
	ID:       "SUI007",
	Severity: framework.Error,
	Title:    "the driver's ServiceAccount lacks get or patch on the UI Service",
	Name:     "UIServiceRBAC",
	Catches:  "The driver Pod's ServiceAccount is not granted get and patch on its UI Service by the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in the input (subjects by ServiceAccount, user name and groups; wildcards; resourceNames; the binding's namespace; ClusterRole aggregation).",
	Why:      "The runtime's bind and withdraw requests are refused with 403: the UI Service never gets endpoints, and at shutdown it cannot be withdrawn.",
	Fix:      "Bind a Role granting get and patch on services, resourceNames: [the UI Service], to the driver's ServiceAccount in the UI Service's namespace (sparkui-fn adds one with rbac.create: true). With rbac.create: false the grant may live outside the input and the finding is a warning.",
	Failing: `kind: Role
metadata: {name: wordcount-…-ui-svc-binder, namespace: analytics}
rules:
- apiGroups: [""]
  resources: [services]
  resourceNames: [wordcount-…-driver-svc]   # not the UI Service: SUI007 on the Pod's spec.serviceAccountName
  verbs: [get, patch]
---
kind: RoleBinding
metadata: {name: wordcount-…-ui-svc-binder, namespace: analytics}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: wordcount-…-ui-svc-binder}
subjects: [{kind: ServiceAccount, name: spark, namespace: analytics}]
`,
	Passing: `  resourceNames: [wordcount-…-ui-svc]
`,
	Notes: "SUI007 evaluates the RBAC objects the way the API server's authorizer and the ClusterRole aggregation controller do: a RoleBinding grants only in its own namespace, and its ServiceAccount subject without a namespace means the binding's; a ServiceAccount is matched as itself, as the user `system:serviceaccount:<ns>:<name>` and through the groups `system:serviceaccounts`, `system:serviceaccounts:<ns>` and `system:authenticated`; `*` matches any verb, resource and API group; `resourceNames` must name the UI Service; an aggregated ClusterRole (an `aggregationRule`) grants exactly the rules of the ClusterRoles its selectors match, transitively, and none of the rules written in its own manifest (the controller overwrites them). Grants that live only in the cluster (for example a binding to the built-in `edit` ClusterRole) are not in the input and so do not count: set `rbac.create: false` to make the finding a warning in that case.",
	Check: checkSUI007,
}

// checkSUI007: without get and patch on its UI Service the runtime can never bind it. The
// Roles, ClusterRoles and bindings in the input are evaluated the way the RBAC authorizer
// does: subjects (ServiceAccount, its user name, its groups), wildcards, resourceNames and
// ClusterRole aggregation.
func checkSUI007(ctx *Context) []Finding {
	var out []Finding
	var ev *rbacEval
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || !a.Settings.UIEnabled {
			continue
		}
		if ev == nil {
			ev = newRBACEval(ctx.Model.RBAC)
		}
		_, svc := app.Meta(a.UIService)
		var missing []string
		for _, verb := range sidecar.RuntimeVerbs {
			if !ev.allowed(a.Namespace, a.SA(), verb, svc) {
				missing = append(missing, verb)
			}
		}
		if len(missing) == 0 {
			continue
		}
		f := Finding{Object: a.Object, Field: a.ServiceAccountField(),
			Msg: "ServiceAccount " + a.SA() + " may not " + strings.Join(missing, " or ") + " services/" + svc +
				" in the input's RBAC: grant it with a Role (resourceNames: [" + svc + "]) bound to the ServiceAccount, or let the function create one (rbac.create: true)"}
		if ctx.RBACManagedElsewhere {
			f.Severity = framework.Warning
			f.Msg += " (rbac.create is false: make sure the cluster grants it)"
		}
		out = append(out, f)
	}
	return out
}

// rbacEval answers "may this ServiceAccount do verb on services/name" for many applications
// at once: grants are gathered once per ServiceAccount, so a thousand applications sharing
// one ServiceAccount cost one pass over the bindings, not a thousand.
type rbacEval struct {
	roles        map[[2]string]*yaml.RNode // {namespace, name}
	clusterRoles map[string]*yaml.RNode
	// clusterRoleList is the ClusterRoles in input order, so aggregation is deterministic;
	// selectors are their aggregation selectors; aggregated caches the rules of aggregated
	// ClusterRoles.
	clusterRoleList []*yaml.RNode
	selectors       map[*yaml.RNode][]labels.Selector
	aggregated      map[*yaml.RNode][]*yaml.Node
	bindings        map[string][]*yaml.RNode // by subject key (see subjectKey)
	cache           map[[2]string]*grants
}

// grants are the verbs a subject holds on services: on all of them, or on named ones.
type grants struct {
	all   map[string]bool
	named map[string]map[string]bool
}

func newRBACEval(objs []*yaml.RNode) *rbacEval {
	e := &rbacEval{roles: map[[2]string]*yaml.RNode{}, clusterRoles: map[string]*yaml.RNode{},
		bindings: map[string][]*yaml.RNode{}, cache: map[[2]string]*grants{}, aggregated: map[*yaml.RNode][]*yaml.Node{}, selectors: map[*yaml.RNode][]labels.Selector{}}
	for _, o := range objs {
		ns, name := app.Meta(o)
		switch kind := yamlx.GetStr(o.YNode(), "kind"); kind {
		case "Role":
			e.roles[[2]string{ns, name}] = o
		case "ClusterRole":
			e.clusterRoles[name] = o
			e.clusterRoleList = append(e.clusterRoleList, o)
			e.selectors[o] = aggregationSelectors(o)
		case "RoleBinding", "ClusterRoleBinding":
			seen := map[string]bool{}
			for _, s := range yamlx.Items(yamlx.Get(o.YNode(), "subjects")) {
				if k := subjectKey(s, kind, ns); k != "" && !seen[k] {
					seen[k] = true
					e.bindings[k] = append(e.bindings[k], o)
				}
			}
		}
	}
	return e
}

// subjectKey names a binding subject the way the authorizer matches it. A RoleBinding's
// ServiceAccount subject without a namespace means the binding's own.
func subjectKey(s *yaml.Node, bindingKind, bindingNS string) string {
	name := yamlx.GetStr(s, "name")
	switch yamlx.GetStr(s, "kind") {
	case "ServiceAccount":
		ns := yamlx.GetStr(s, "namespace")
		if ns == "" && bindingKind == "RoleBinding" {
			ns = bindingNS
		}
		return "user:system:serviceaccount:" + ns + ":" + name
	case "User":
		return "user:" + name
	case "Group":
		return "group:" + name
	}
	return ""
}

func (e *rbacEval) allowed(ns, sa, verb, svc string) bool {
	g := e.grantsOf(ns, sa)
	return g.all[verb] || g.all["*"] || g.named[verb][svc] || g.named["*"][svc]
}

func (e *rbacEval) grantsOf(ns, sa string) *grants {
	key := [2]string{ns, sa}
	if g := e.cache[key]; g != nil {
		return g
	}
	g := &grants{all: map[string]bool{}, named: map[string]map[string]bool{}}
	seen := map[*yaml.RNode]bool{}
	// The identities a ServiceAccount token carries: its user name and its groups.
	for _, k := range []string{
		"user:system:serviceaccount:" + ns + ":" + sa,
		"group:system:serviceaccounts",
		"group:system:serviceaccounts:" + ns,
		"group:system:authenticated",
	} {
		for _, b := range e.bindings[k] {
			if seen[b] {
				continue
			}
			seen[b] = true
			bns, _ := app.Meta(b)
			if yamlx.GetStr(b.YNode(), "kind") == "RoleBinding" && bns != ns {
				continue
			}
			for _, rule := range e.rules(b, bns) {
				g.add(rule)
			}
		}
	}
	e.cache[key] = g
	return g
}

func (g *grants) add(rule *yaml.Node) {
	has := func(key string, want ...string) bool {
		for _, v := range yamlx.Items(yamlx.Get(rule, key)) {
			if slices.Contains(want, yamlx.Str(v)) {
				return true
			}
		}
		return false
	}
	if !has("apiGroups", "", "*") || !has("resources", "services", "*") {
		return
	}
	names := yamlx.Items(yamlx.Get(rule, "resourceNames"))
	for _, v := range yamlx.Items(yamlx.Get(rule, "verbs")) {
		verb := yamlx.Str(v)
		if len(names) == 0 {
			g.all[verb] = true
			continue
		}
		if g.named[verb] == nil {
			g.named[verb] = map[string]bool{}
		}
		for _, n := range names {
			g.named[verb][yamlx.Str(n)] = true
		}
	}
}

func (e *rbacEval) rules(b *yaml.RNode, bns string) []*yaml.Node {
	ref := yamlx.Get(b.YNode(), "roleRef")
	name := yamlx.GetStr(ref, "name")
	switch yamlx.GetStr(ref, "kind") {
	case "Role":
		if yamlx.GetStr(b.YNode(), "kind") != "RoleBinding" {
			return nil
		}
		if r := e.roles[[2]string{bns, name}]; r != nil {
			return yamlx.Items(yamlx.Get(r.YNode(), "rules"))
		}
	case "ClusterRole":
		if cr := e.clusterRoles[name]; cr != nil {
			return e.clusterRoleRules(cr)
		}
	}
	return nil
}

// clusterRoleRules are the rules a ClusterRole grants once the aggregation controller has run.
// For an aggregated ClusterRole (aggregationRule with selectors) that is the union of the rules
// of the other ClusterRoles its selectors match, and nothing of its own: the controller
// overwrites the rules written in the manifest. A selected ClusterRole that is itself
// aggregated contributes its aggregated rules (the controller converges to that), so the
// result is the rules of every plain ClusterRole reachable through selectors, cycles included.
func (e *rbacEval) clusterRoleRules(cr *yaml.RNode) []*yaml.Node {
	if len(e.selectors[cr]) == 0 {
		return yamlx.Items(yamlx.Get(cr.YNode(), "rules"))
	}
	if r, ok := e.aggregated[cr]; ok {
		return r
	}
	var out []*yaml.Node
	seen := map[*yaml.RNode]bool{cr: true}
	queue := []*yaml.RNode{cr}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		sels := e.selectors[cur]
		for _, other := range e.clusterRoleList {
			if other == cur || seen[other] || !matchesAny(sels, other) {
				continue
			}
			seen[other] = true
			if len(e.selectors[other]) > 0 {
				queue = append(queue, other)
			} else {
				out = append(out, yamlx.Items(yamlx.Get(other.YNode(), "rules"))...)
			}
		}
	}
	e.aggregated[cr] = out
	return out
}

// aggregationSelectors are a ClusterRole's aggregationRule.clusterRoleSelectors; none for a
// plain ClusterRole (an aggregationRule without selectors is refused by the API server).
func aggregationSelectors(cr *yaml.RNode) []labels.Selector {
	var sels []labels.Selector
	for _, s := range yamlx.Items(yamlx.Get(cr.YNode(), "aggregationRule", "clusterRoleSelectors")) {
		if sel, ok := labelSelector(s); ok {
			sels = append(sels, sel)
		}
	}
	return sels
}

// labelSelector reads a metav1.LabelSelector node with the semantics of
// metav1.LabelSelectorAsSelector (an empty selector matches everything), built on the labels
// package alone: importing meta/v1 for this one conversion costs the function's process start
// several milliseconds of package initialisation (docs/performance.md). false for a selector
// the API server would refuse.
func labelSelector(n *yaml.Node) (labels.Selector, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	sel := labels.NewSelector()
	ml := present(yamlx.Get(n, "matchLabels"))
	if ml != nil && ml.Kind != yaml.MappingNode {
		return nil, false
	}
	for k, v := range yamlx.StringMap(ml) {
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, false
		}
		sel = sel.Add(*r)
	}
	exprs := present(yamlx.Get(n, "matchExpressions"))
	if exprs != nil && exprs.Kind != yaml.SequenceNode {
		return nil, false
	}
	ops := map[string]selection.Operator{"In": selection.In, "NotIn": selection.NotIn, "Exists": selection.Exists, "DoesNotExist": selection.DoesNotExist}
	for _, e := range yamlx.Items(exprs) {
		op, ok := ops[yamlx.GetStr(e, "operator")]
		if !ok {
			return nil, false
		}
		var vals []string
		for _, v := range yamlx.Items(yamlx.Get(e, "values")) {
			if v.Kind != yaml.ScalarNode {
				return nil, false
			}
			vals = append(vals, v.Value)
		}
		r, err := labels.NewRequirement(yamlx.GetStr(e, "key"), op, vals)
		if err != nil {
			return nil, false
		}
		sel = sel.Add(*r)
	}
	return sel, true
}

// present is n, or nil for an explicit null (which JSON reads as the field being absent).
func present(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	return n
}

func matchesAny(sels []labels.Selector, cr *yaml.RNode) bool {
	l := labels.Set(app.Labels(cr))
	for _, sel := range sels {
		if sel.Matches(l) {
			return true
		}
	}
	return false
}
