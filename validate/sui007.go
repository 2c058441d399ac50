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
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/transform"
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
		for _, verb := range transform.RuntimeVerbs {
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

type rbacEval struct {
	roles        map[[2]string]*yaml.RNode // {namespace, name}
	clusterRoles map[string]*yaml.RNode
	bindings     []*yaml.RNode
}

func newRBACEval(objs []*yaml.RNode) *rbacEval {
	e := &rbacEval{roles: map[[2]string]*yaml.RNode{}, clusterRoles: map[string]*yaml.RNode{}}
	for _, o := range objs {
		ns, name := app.Meta(o)
		switch yamlx.GetStr(o.YNode(), "kind") {
		case "Role":
			e.roles[[2]string{ns, name}] = o
		case "ClusterRole":
			e.clusterRoles[name] = o
		case "RoleBinding", "ClusterRoleBinding":
			e.bindings = append(e.bindings, o)
		}
	}
	return e
}

func (e *rbacEval) allowed(ns, sa, verb, svc string) bool {
	for _, b := range e.bindings {
		bns, _ := app.Meta(b)
		kind := yamlx.GetStr(b.YNode(), "kind")
		if kind == "RoleBinding" && bns != ns {
			continue
		}
		if !bindsServiceAccount(b, kind, bns, ns, sa) {
			continue
		}
		for _, rule := range e.rules(b, bns) {
			if ruleAllows(rule, verb, svc) {
				return true
			}
		}
	}
	return false
}

func bindsServiceAccount(b *yaml.RNode, kind, bns, ns, sa string) bool {
	for _, s := range yamlx.Items(yamlx.Get(b.YNode(), "subjects")) {
		name := yamlx.GetStr(s, "name")
		switch yamlx.GetStr(s, "kind") {
		case "ServiceAccount":
			sns := yamlx.GetStr(s, "namespace")
			if sns == "" && kind == "RoleBinding" {
				sns = bns
			}
			if name == sa && sns == ns {
				return true
			}
		case "User":
			if name == "system:serviceaccount:"+ns+":"+sa {
				return true
			}
		case "Group":
			if name == "system:serviceaccounts" || name == "system:serviceaccounts:"+ns || name == "system:authenticated" {
				return true
			}
		}
	}
	return false
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

// clusterRoleRules adds the rules of the ClusterRoles an aggregationRule selects: the
// controller would copy them in, and the input may show only the selectors.
func (e *rbacEval) clusterRoleRules(cr *yaml.RNode) []*yaml.Node {
	rules := yamlx.Items(yamlx.Get(cr.YNode(), "rules"))
	agg := yamlx.Items(yamlx.Get(cr.YNode(), "aggregationRule", "clusterRoleSelectors"))
	if len(agg) == 0 {
		return rules
	}
	var sels []labels.Selector
	for _, s := range agg {
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
	out := slices.Clone(rules)
	for _, other := range e.clusterRoles {
		if other == cr {
			continue
		}
		l := labels.Set(app.Labels(other))
		for _, sel := range sels {
			if sel.Matches(l) {
				out = append(out, yamlx.Items(yamlx.Get(other.YNode(), "rules"))...)
				break
			}
		}
	}
	return out
}

func ruleAllows(rule *yaml.Node, verb, svc string) bool {
	has := func(key string, want ...string) bool {
		for _, v := range yamlx.Items(yamlx.Get(rule, key)) {
			if slices.Contains(want, yamlx.Str(v)) {
				return true
			}
		}
		return false
	}
	if !has("apiGroups", "", "*") || !has("resources", "services", "*") || !has("verbs", verb, "*") {
		return false
	}
	names := yamlx.Items(yamlx.Get(rule, "resourceNames"))
	return len(names) == 0 || has("resourceNames", svc)
}
