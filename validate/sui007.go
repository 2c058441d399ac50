package validate

import (
	"encoding/json"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

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
		f := Finding{Object: a.Pod, Field: "spec.serviceAccountName",
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
		b, err := yaml.NewRNode(s).MarshalJSON()
		if err != nil {
			continue
		}
		var ls metav1.LabelSelector
		if json.Unmarshal(b, &ls) != nil {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(&ls); err == nil {
			sels = append(sels, sel)
		}
	}
	return sels
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
