package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

const rbacAPIVersion = "rbac.authorization.k8s.io/v1"

func roleRules(a *app.App, o Options) *yaml.Node {
	rules := yamlx.NewSeq(yamlx.NewMap(
		"apiGroups", []string{""},
		"resources", []string{"services"},
		"resourceNames", []string{a.UIServiceName},
		"verbs", sidecar.RuntimeVerbs,
	))
	if !o.NoEvents {
		// The runtime's Events (docs/events.md). No resourceNames: an Event's name is made
		// when it is created, and RBAC checks a create before there is a name to match.
		rules.Content = append(rules.Content, yamlx.NewMap(
			"apiGroups", []string{sidecar.EventsAPIGroup},
			"resources", []string{sidecar.EventsResource},
			"verbs", sidecar.EventsVerbs,
		))
	}
	return rules
}

func roleRef(a *app.App) *yaml.Node {
	return yamlx.NewMap("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", a.BinderName)
}

func subjects(a *app.App) *yaml.Node {
	s := yamlx.NewMap("kind", "ServiceAccount", "name", a.SA())
	// Without a namespace the binding's own applies, which is what a kustomize namespace
	// transformer applied later expects.
	if a.Namespace != "" {
		yamlx.Set(s, "namespace", yamlx.NewStr(a.Namespace))
	}
	return yamlx.NewSeq(s)
}

// NewRole grants get and patch on exactly the UI Service, and create and patch on Events
// unless they are off.
func NewRole(a *app.App, o Options) *yaml.RNode {
	return object(rbacAPIVersion, "Role", ownMeta(a, a.BinderName), "rules", roleRules(a, o))
}

// NewRoleBinding binds the Role to the driver's ServiceAccount.
func NewRoleBinding(a *app.App) *yaml.RNode {
	return object(rbacAPIVersion, "RoleBinding", ownMeta(a, a.BinderName), "roleRef", roleRef(a), "subjects", subjects(a))
}

// reconcileRBAC brings sparkui's existing Role or RoleBinding rn back to want (NewRole,
// NewRoleBinding): its name and labels, and every field want has beside metadata.
func reconcileRBAC(a *app.App, rn, want *yaml.RNode) {
	ensureOwnMeta(rn, a, a.BinderName)
	for _, k := range []string{"rules", "roleRef", "subjects"} {
		if v := yamlx.Get(want.YNode(), k); v != nil {
			yamlx.SetIfChanged(rn.YNode(), k, v)
		}
	}
}
