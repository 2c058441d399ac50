package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI061: a Role labelled as sparkui's grants more than get and patch on its UI Service.
var SUI061 = Rule{
	ID:       "SUI061",
	Severity: framework.Error,
	Title:    "sparkui's Role grants more than get and patch on its UI Service",
	Name:     "BinderRoleTooWide",
	Catches:  "A Role labelled app.kubernetes.io/managed-by: sparkui (the `<prefix>-ui-svc-binder` Role) whose rules are not exactly one rule with apiGroups [\"\"], resources [services], verbs get and patch, and resourceNames naming only its application's UI Service: a missing or widened resourceNames, other or wildcard verbs, resources or API groups, nonResourceURLs, or a second rule.",
	Why:      "The Role is bound to the driver's ServiceAccount, which runs the user's Spark code. Without resourceNames (or with a wildcard) the driver may patch every Service of the namespace: repoint another application's UI, or any other Service, at itself. The runtime needs nothing more in any mode: it binds and withdraws by guarded JSON Patches of its own UI Service, reads that Service only to name the owner of a refused patch and to poll a load balancer's address, and takes the node's address from the downward API.",
	Fix:      "Let sparkui-fn write the Role (rbac.create: true, the default), or write exactly: rules: [{apiGroups: [\"\"], resources: [services], resourceNames: [<prefix>-ui-svc], verbs: [get, patch]}]. Grant anything else the driver needs in a Role of your own, not labelled as sparkui's.",
	Failing: `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: wordcount-…-ui-svc-binder
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-7e0d…}
rules:
- apiGroups: [""]
  resources: [services]      # SUI061 rules[0] (no resourceNames: every Service)
  verbs: [get, patch]
`,
	Passing: `rules:
- apiGroups: [""]
  resources: [services]
  resourceNames: [wordcount-…-ui-svc]
  verbs: [get, patch]
`,
	Notes: "Every external-URI mode needs the same grant (docs/rbac.md): `nodePort` reads the allocated nodePort from the bind's response and the node's address from `$HOST_IP` (downward API `status.hostIP`), never a Node (runtime/externaluri/nodeport.go); `loadBalancer` GETs the UI Service until its status has an ingress (loadbalancer.go); `annotation` leaves resolving to an outside controller with RBAC of its own; the History Server hand-off patches the same Service. The bind's ownerReference has no blockOwnerDeletion, so no permission on the driver Pod is needed. " +
		"In the function and `sparkui-fn validate`, resourceNames must name the UI Service of the application the Role's identity label belongs to; a Role whose application is not in the input must name one Service whose name ends in `-ui-svc`. The admission policy sees one Role and checks the same shape with that last form: the UI Service's name cannot be derived from the Role's when either was shortened.",
	Check: checkSUI061,
	Admission: []AdmissionPolicy{{Name: "binder-role", Group: "rbac.authorization.k8s.io", Versions: []string{"v1"}, Resources: []string{"roles"},
		ObjectLabels: map[string]string{names.LabelManagedBy: names.ManagedByValue},
		Validations:  []string{celBinderRole}}},
}

// celBinderRole: exactly one rule, with exactly the four fields sparkui writes and their values
// (a verb listed twice grants nothing more); the one resource name is a UI Service's.
var celBinderRole = `has(object.rules) && size(object.rules) == 1 && object.rules.all(r, ` +
	`has(r.apiGroups) && r.apiGroups == [''] && has(r.resources) && r.resources == ['services'] && ` +
	`has(r.verbs) && r.verbs.all(v, v in ['` + strings.Join(sidecar.RuntimeVerbs, "', '") + `']) && ` +
	celAllVerbs + `!has(r.nonResourceURLs) && ` +
	`has(r.resourceNames) && size(r.resourceNames) == 1 && r.resourceNames[0].endsWith('` + names.UISvcSuffix + `'))`

var celAllVerbs = func() string {
	var b strings.Builder
	for _, v := range sidecar.RuntimeVerbs {
		b.WriteString("'" + v + "' in r.verbs && ")
	}
	return b.String()
}()

// ruleKeys are the fields of the one rule sparkui's Role has.
var ruleKeys = []string{"apiGroups", "resources", "resourceNames", "verbs"}

// checkSUI061: every Role labelled as sparkui's, against the one rule transform writes
// (transform/rbac.go roleRules) for its application's UI Service.
func checkSUI061(ctx *Context) []Finding {
	uiService := map[*yaml.RNode]string{}
	for _, a := range ctx.Model.Apps {
		if a.Role != nil {
			uiService[a.Role] = a.UIServiceName
		}
	}
	var out []Finding
	for _, r := range ctx.Model.RBAC {
		if yamlx.GetStr(r.YNode(), "kind") != "Role" || app.Labels(r)[names.LabelManagedBy] != names.ManagedByValue {
			continue
		}
		out = append(out, binderRoleFindings(r, uiService[r])...)
	}
	return out
}

// binderRoleFindings are what r's rules grant beyond get and patch on Service svc ("" when
// r's application is not in the input: then any one Service named like a UI Service).
func binderRoleFindings(r *yaml.RNode, svc string) []Finding {
	want := "apiGroups [\"\"], resources [services], resourceNames [" + cmp.Or(svc, "<prefix>"+names.UISvcSuffix) + "], verbs [" + strings.Join(sidecar.RuntimeVerbs, " ") + "]"
	rules := yamlx.Items(yamlx.Get(r.YNode(), "rules"))
	if len(rules) == 0 {
		return []Finding{{Object: r, Field: "rules", Msg: "sparkui's Role has no rules: it must have exactly one, " + want}}
	}
	var out []Finding
	bad := func(field, what string) {
		out = append(out, Finding{Object: r, Field: field, Msg: what + ": sparkui's Role grants exactly " + want + ", nothing more"})
	}
	checkBinderRule(rules[0], svc, bad)
	for i := 1; i < len(rules); i++ {
		bad(fmt.Sprintf("rules[%d]", i), "another rule")
	}
	return out
}

// checkBinderRule calls bad for each field of rule, the Role's first, that differs from the
// one rule sparkui writes for UI Service svc ("" when not known).
func checkBinderRule(rule *yaml.Node, svc string, bad func(field, what string)) {
	if rule.Kind != yaml.MappingNode {
		bad("rules[0]", "the rule is "+yamlx.Shape(rule)+", not a mapping")
		return
	}
	yamlx.Pairs(rule, func(k, _ *yaml.Node) {
		if !slices.Contains(ruleKeys, k.Value) {
			bad("rules[0]."+k.Value, "the rule also has "+k.Value)
		}
	})
	list := func(key string) []string {
		var s []string
		for _, n := range yamlx.Items(yamlx.Get(rule, key)) {
			s = append(s, yamlx.Str(n))
		}
		return s
	}
	if g := list("apiGroups"); !slices.Equal(g, []string{""}) {
		bad("rules[0].apiGroups", fmt.Sprintf("apiGroups %q", g))
	}
	if res := list("resources"); !slices.Equal(res, []string{"services"}) {
		bad("rules[0].resources", fmt.Sprintf("resources %q", res))
	}
	verbs := list("verbs")
	if !sameSet(verbs, sidecar.RuntimeVerbs) {
		bad("rules[0].verbs", fmt.Sprintf("verbs %q", verbs))
	}
	rn := list("resourceNames")
	switch {
	case len(rn) == 0:
		bad("rules[0].resourceNames", "no resourceNames: every Service of the namespace")
	case len(rn) > 1:
		bad("rules[0].resourceNames", fmt.Sprintf("resourceNames %q: more than the UI Service", rn))
	case svc != "" && rn[0] != svc:
		bad("rules[0].resourceNames", fmt.Sprintf("resourceNames %q: not its application's UI Service %s", rn, svc))
	case svc == "" && !strings.HasSuffix(rn[0], names.UISvcSuffix):
		bad("rules[0].resourceNames", fmt.Sprintf("resourceNames %q: not a UI Service", rn))
	}
}

// sameSet reports whether a and b hold the same strings, repeats aside.
func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}
