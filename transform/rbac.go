package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

const rbacAPIVersion = "rbac.authorization.k8s.io/v1"

func roleRules(a *app.App) *yaml.Node {
	return yamlx.NewSeq(yamlx.NewMap(
		"apiGroups", []string{""},
		"resources", []string{"services"},
		"resourceNames", []string{a.UIServiceName},
		"verbs", sidecar.RuntimeVerbs,
	))
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

// NewRole grants get and patch on exactly the UI Service.
func NewRole(a *app.App) *yaml.RNode {
	return object(rbacAPIVersion, "Role", ownMeta(a, a.BinderName), "rules", roleRules(a))
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
