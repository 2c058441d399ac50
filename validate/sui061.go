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

// SUI061: a Role labelled as sparkui's grants more than get and patch on its UI Service (and
// create and patch on Events).
var SUI061 = Rule{
	ID:       "SUI061",
	Severity: framework.Error,
	Title:    "sparkui's Role grants more than get and patch on its UI Service and create and patch on Events",
	Name:     "BinderRoleTooWide",
	Catches:  "A Role labelled app.kubernetes.io/managed-by: sparkui (the `<prefix>-ui-svc-binder` Role) whose rules are not exactly one rule with apiGroups [\"\"], resources [services], verbs get and patch, and resourceNames naming only its application's UI Service, plus at most the events rule (apiGroups [events.k8s.io], resources [events], verbs create and patch, no resourceNames): a missing or widened resourceNames, other or wildcard verbs, resources or API groups, nonResourceURLs, an events rule with other verbs, groups or resources (events in the core group included), or any other rule.",
	Why:      "The Role is bound to the driver's ServiceAccount, which runs the user's Spark code. Without resourceNames (or with a wildcard) the driver may patch every Service of the namespace: repoint another application's UI, or any other Service, at itself. The runtime needs nothing more in any mode: it binds and withdraws by guarded JSON Patches of its own UI Service, reads that Service only to name the owner of a refused patch and to poll a load balancer's address, takes the node's address from the downward API, and records its Events with client-go's events library, which only creates Events and patches their series on events.k8s.io.",
	Fix:      "Let sparkui-fn write the Role (rbac.create: true, the default), or write exactly: rules: [{apiGroups: [\"\"], resources: [services], resourceNames: [<prefix>-ui-svc], verbs: [get, patch]}, {apiGroups: [events.k8s.io], resources: [events], verbs: [create, patch]}] (the second rule only while runtime.events is not false). Grant anything else the driver needs in a Role of your own, not labelled as sparkui's.",
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
- apiGroups: [events.k8s.io]   # the runtime's Events; absent with runtime.events: false
  resources: [events]
  verbs: [create, patch]
`,
	Notes: "Every external-URI mode needs the same grant (docs/rbac.md): `nodePort` reads the allocated nodePort from the bind's response and the node's address from `$HOST_IP` (downward API `status.hostIP`), never a Node (runtime/externaluri/nodeport.go); `loadBalancer` GETs the UI Service until its status has an ingress (loadbalancer.go); `annotation` leaves resolving to an outside controller with RBAC of its own; the History Server hand-off patches the same Service. The bind's ownerReference has no blockOwnerDeletion, so no permission on the driver Pod is needed. The events rule has no resourceNames because it cannot: an Event's name is generated when it is created, and the RBAC authorizer checks a create before any name exists (docs/events.md); it grants creating and patching Events in the namespace, not reading them. " +
		"In the function and `sparkui-fn validate`, resourceNames must name the UI Service of the application the Role's identity label belongs to; a Role whose application is not in the input must name one Service whose name ends in `-ui-svc`. The admission policy sees one Role and checks the same shape with that last form: the UI Service's name cannot be derived from the Role's when either was shortened.",
	Check: checkSUI061,
	Admission: []AdmissionPolicy{{Name: "binder-role", Group: "rbac.authorization.k8s.io", Versions: []string{"v1"}, Resources: []string{"roles"},
		ObjectLabels: map[string]string{names.LabelManagedBy: names.ManagedByValue},
		Validations:  []string{celBinderRole}}},
}

// celBinderRole: the Service rule, with exactly the four fields sparkui writes and their
// values (a verb listed twice grants nothing more; the one resource name is a UI Service's),
// and at most one more rule, exactly the events rule; in either order.
var celBinderRole = `has(object.rules) && size(object.rules) >= 1 && size(object.rules) <= 2 && ` +
	`object.rules.exists_one(r, ` + celServiceRule + `) && ` +
	`object.rules.all(r, (` + celServiceRule + `) || (` + celEventsRule + `))`

var celServiceRule = `has(r.apiGroups) && r.apiGroups == [''] && has(r.resources) && r.resources == ['services'] && ` +
	`has(r.verbs) && r.verbs.all(v, v in ['` + strings.Join(sidecar.RuntimeVerbs, "', '") + `']) && ` +
	celAllVerbs(sidecar.RuntimeVerbs) + `!has(r.nonResourceURLs) && ` +
	`has(r.resourceNames) && size(r.resourceNames) == 1 && r.resourceNames[0].endsWith('` + names.UISvcSuffix + `')`

// celEventsRule: what the runtime's Events need (sidecar.EventsVerbs), no resourceNames.
var celEventsRule = `has(r.apiGroups) && r.apiGroups == ['` + sidecar.EventsAPIGroup + `'] && ` +
	`has(r.resources) && r.resources == ['` + sidecar.EventsResource + `'] && ` +
	`has(r.verbs) && r.verbs.all(v, v in ['` + strings.Join(sidecar.EventsVerbs, "', '") + `']) && ` +
	celAllVerbs(sidecar.EventsVerbs) +
	`(!has(r.resourceNames) || size(r.resourceNames) == 0) && (!has(r.nonResourceURLs) || size(r.nonResourceURLs) == 0)`

func celAllVerbs(verbs []string) string {
	var b strings.Builder
	for _, v := range verbs {
		b.WriteString("'" + v + "' in r.verbs && ")
	}
	return b.String()
}

// ruleKeys are the fields of the Service rule sparkui's Role has.
var ruleKeys = []string{"apiGroups", "resources", "resourceNames", "verbs"}

// eventsRuleText is the events rule as findings name it.
var eventsRuleText = "apiGroups [" + sidecar.EventsAPIGroup + "], resources [" + sidecar.EventsResource + "], verbs [" + strings.Join(sidecar.EventsVerbs, " ") + "]"

// checkSUI061: every Role labelled as sparkui's, against the rules transform writes
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
// r's application is not in the input: then any one Service named like a UI Service) and
// the events rule.
func binderRoleFindings(r *yaml.RNode, svc string) []Finding {
	want := "apiGroups [\"\"], resources [services], resourceNames [" + cmp.Or(svc, "<prefix>"+names.UISvcSuffix) + "], verbs [" + strings.Join(sidecar.RuntimeVerbs, " ") + "]" +
		" (and, unless runtime.events is false, " + eventsRuleText + ")"
	rules := yamlx.Items(yamlx.Get(r.YNode(), "rules"))
	if len(rules) == 0 {
		return []Finding{{Object: r, Field: "rules", Msg: "sparkui's Role has no rules: it must have exactly " + want}}
	}
	var out []Finding
	bad := func(field, what string) {
		out = append(out, Finding{Object: r, Field: field, Msg: what + ": sparkui's Role grants exactly " + want + ", nothing more"})
	}
	// One rule may be the events rule, wherever it is; the first other one is the Service
	// rule (checked first, so its findings come first), and anything beyond is another rule.
	events, service := -1, -1
	var others []int
	for i, rule := range rules {
		switch {
		case events < 0 && isEventsRule(rule):
			events = i
		case service < 0:
			service = i
		default:
			others = append(others, i)
		}
	}
	if service < 0 {
		return []Finding{{Object: r, Field: "rules", Msg: "sparkui's Role has no rule for its UI Service: it must have exactly " + want}}
	}
	checkBinderRule(rules[service], fmt.Sprintf("rules[%d]", service), svc, bad)
	for _, i := range others {
		what := "another rule"
		if mentionsEvents(rules[i]) {
			what = "another rule on events, not exactly " + eventsRuleText
		}
		bad(fmt.Sprintf("rules[%d]", i), what)
	}
	return out
}

// isEventsRule reports whether rule is exactly the events rule (sidecar.EventsVerbs on
// events.k8s.io events, no resourceNames or nonResourceURLs).
func isEventsRule(rule *yaml.Node) bool {
	if rule.Kind != yaml.MappingNode {
		return false
	}
	ok := true
	yamlx.Pairs(rule, func(k, v *yaml.Node) {
		switch k.Value {
		case "apiGroups", "resources", "verbs":
		case "resourceNames", "nonResourceURLs":
			ok = ok && len(yamlx.Items(v)) == 0
		default:
			ok = false
		}
	})
	return ok && slices.Equal(strList(rule, "apiGroups"), []string{sidecar.EventsAPIGroup}) &&
		slices.Equal(strList(rule, "resources"), []string{sidecar.EventsResource}) &&
		sameSet(strList(rule, "verbs"), sidecar.EventsVerbs)
}

// mentionsEvents: a rule that looks like a widened or misplaced events rule.
func mentionsEvents(rule *yaml.Node) bool {
	return slices.Contains(strList(rule, "resources"), sidecar.EventsResource) || slices.Contains(strList(rule, "apiGroups"), sidecar.EventsAPIGroup)
}

func strList(rule *yaml.Node, key string) []string {
	var s []string
	for _, n := range yamlx.Items(yamlx.Get(rule, key)) {
		s = append(s, yamlx.Str(n))
	}
	return s
}

// checkBinderRule calls bad for each field of rule, the Role's Service rule at path, that
// differs from the one Service rule sparkui writes for UI Service svc ("" when not known).
func checkBinderRule(rule *yaml.Node, path, svc string, bad func(field, what string)) {
	if rule.Kind != yaml.MappingNode {
		bad(path, "the rule is "+yamlx.Shape(rule)+", not a mapping")
		return
	}
	yamlx.Pairs(rule, func(k, _ *yaml.Node) {
		if !slices.Contains(ruleKeys, k.Value) {
			bad(path+"."+k.Value, "the rule also has "+k.Value)
		}
	})
	if g := strList(rule, "apiGroups"); !slices.Equal(g, []string{""}) {
		bad(path+".apiGroups", fmt.Sprintf("apiGroups %q", g))
	}
	if res := strList(rule, "resources"); !slices.Equal(res, []string{"services"}) {
		bad(path+".resources", fmt.Sprintf("resources %q", res))
	}
	verbs := strList(rule, "verbs")
	if !sameSet(verbs, sidecar.RuntimeVerbs) {
		bad(path+".verbs", fmt.Sprintf("verbs %q", verbs))
	}
	rn := strList(rule, "resourceNames")
	switch {
	case len(rn) == 0:
		bad(path+".resourceNames", "no resourceNames: every Service of the namespace")
	case len(rn) > 1:
		bad(path+".resourceNames", fmt.Sprintf("resourceNames %q: more than the UI Service", rn))
	case svc != "" && rn[0] != svc:
		bad(path+".resourceNames", fmt.Sprintf("resourceNames %q: not its application's UI Service %s", rn, svc))
	case svc == "" && !strings.HasSuffix(rn[0], names.UISvcSuffix):
		bad(path+".resourceNames", fmt.Sprintf("resourceNames %q: not a UI Service", rn))
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
