package transform

import (
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Uninstall takes out of m everything sparkui added (UninstallPlans), so that dropping the
// function from a pipeline is two commits: the output of this, then the pipeline without
// sparkui. The items come back in input order; nothing is added.
func Uninstall(m *app.Model) ([]*yaml.RNode, []Note) {
	return run(m, UninstallPlans(m))
}

// UninstallPlans is the removal of sparkui from every application of m, plus every object
// of a kind sparkui writes that carries its managed-by label without belonging to any
// application of the input (a UI Service left behind by a carrier since deleted).
//
// What is sparkui's is decided by its marks alone, never by a value looking like one it
// writes (docs/uninstall.md, "What counts as sparkui's"):
//   - objects: a UI Service, Role, RoleBinding or route carrying
//     app.kubernetes.io/managed-by: sparkui (the label sparkui puts on everything it adds, and
//     the one the runtime's bind tests);
//   - in the carrier: the entries named sparkui-runtime / sparkui-runtime-auth (the runtime
//     container, its volumes, the driver's mounts), the preStop hook only when it is sparkui's
//     withdraw command (OurPreStop), the identity label only where sparkui sets it and with
//     sparkui's value, on both kubeflow injections; a pod template or driver container only
//     when the removal leaves it as sparkui creates it (empty, or a container with its name
//     alone);
//   - in the Spark conf: spark.ui.proxyBase and spark.ui.proxyRedirectUri only when the UI
//     Service records the route they were written for (routeConfRemoval), and the Apache
//     driver container pin only when it names the container PinConf picks (pinRemoval).
func UninstallPlans(m *app.Model) []*AppPlan {
	plans := make([]*AppPlan, 0, len(m.Apps)+1)
	claimed := map[*yaml.RNode]bool{}
	for _, a := range m.Apps {
		p := &AppPlan{App: a}
		for _, rn := range ownObjects(a) {
			if !claimed[rn] {
				claimed[rn] = true
				p.Remove = append(p.Remove, rn)
			}
		}
		p.Carrier = uninstallCarrier(a.Carrier)
		p.Pin = pinRemoval(a.Carrier)
		p.Conf = routeConfRemoval(a)
		plans = append(plans, p)
	}
	var orphans []*yaml.RNode
	for _, rn := range m.Items {
		if !claimed[rn] && sparkuiObject(rn) {
			orphans = append(orphans, rn)
		}
	}
	if len(orphans) > 0 {
		plans = append(plans, &AppPlan{Remove: orphans})
	}
	return plans
}

// ownObjects are the objects sparkui added for a.
func ownObjects(a *app.App) []*yaml.RNode {
	var out []*yaml.RNode
	for _, rn := range []*yaml.RNode{a.UIService, a.Role, a.RoleBinding} {
		if rn != nil {
			out = append(out, rn)
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(a.Routes)) {
		out = append(out, a.Routes[kind])
	}
	return append(out, a.ExtraRoutes...)
}

// sparkuiObject reports an object of a kind sparkui writes (Service, Role, RoleBinding, a
// route kind) labelled as sparkui's. A carrier is never one: its label, if a user put it
// there, does not make the application sparkui's to delete.
func sparkuiObject(rn *yaml.RNode) bool {
	if app.Ignored(rn) || yamlx.GetStr(rn.YNode(), "metadata", "labels", names.LabelManagedBy) != names.ManagedByValue {
		return false
	}
	switch kind := yamlx.GetStr(rn.YNode(), "kind"); kind {
	case "Service", "Role", "RoleBinding":
		return true
	default:
		_, route := app.RouteObjectKinds[kind]
		return route
	}
}

// uninstallCarrier is RemovalPlan's removal (for kubeflow carriers, of both injections),
// plus what only preparePlan made: the pod template or driver container sparkui created to
// write into, found emptied by the removal (injectionRemoval's template reading).
func uninstallCarrier(c *app.Carrier) Plan {
	if c == nil {
		return nil
	}
	if c.HasInjections() {
		// Both injections: the one in use and the other (a leftover of a switch).
		return append(injectionRemoval(c, c), OtherInjectionPlan(c)...)
	}
	if c.SparkOwnsIdentityLabel() {
		// A spark-submit Pod's spark-app-selector is Spark's, or one sparkui set in client
		// mode when it was absent: no mark tells the two apart, and a label the runtime's
		// selector wants is harmless once the UI Service is gone; it stays.
		return withoutLabel(injectionRemoval(c, c))
	}
	return injectionRemoval(c, c)
}

// withoutLabel drops injectionRemoval's identity-label removal (sparkui.dev/application,
// which a spark-submit Pod never gets from sparkui).
func withoutLabel(p Plan) Plan {
	out := p[:0]
	for _, o := range p {
		if o.Kind == OpRemove && o.When == Equal {
			continue
		}
		out = append(out, o)
	}
	return out
}

// pinRemoval takes spark.kubernetes.driver.podTemplateContainerName out of an Apache carrier's
// sparkConf when it names the container PinConf would pin (the template's first container, or
// spark-kubernetes-driver where the template sparkui made has none). sparkui records nothing
// else about it: a user's own pin of that same container goes too, which changes nothing
// Spark does, as Spark's selectSparkContainer takes the first container when the key is unset.
func pinRemoval(c *app.Carrier) []ConfOp {
	if c == nil || !c.PinsDriverContainer() {
		return nil
	}
	v, set := c.Conf[app.KeyPodTemplateCtr]
	if !set {
		return nil
	}
	c2 := *c
	c2.Conf = maps.Clone(c.Conf)
	delete(c2.Conf, app.KeyPodTemplateCtr)
	want, err := PinConf(&c2, true)
	if err != nil || len(want) != 1 || want[0].Value != v {
		return nil
	}
	return []ConfOp{{Key: app.KeyPodTemplateCtr}}
}

// routeConfRemoval takes out the proxy settings a route of sparkui's wrote (routeConf), known
// by the route the UI Service records (route-prefix, route-host): spark.ui.proxyBase when it
// is that prefix; spark.ui.proxyRedirectUri when it is what routeConf writes for it ("/"
// under a prefix, or http(s)://<recorded host>). A value the record does not explain is the
// user's and stays; so does everything when no UI Service records a route.
func routeConfRemoval(a *app.App) []ConfOp {
	prefix, routed := a.RoutePrefix()
	if !routed || !a.ConfWritable() {
		return nil
	}
	conf := a.Props
	if a.Carrier != nil && a.Carrier.ConfPath != "" {
		conf = a.Carrier.Conf
	}
	var ops []ConfOp
	if v, ok := conf[KeyProxyBase]; ok && prefix != "/" && v == prefix {
		ops = append(ops, ConfOp{Key: KeyProxyBase})
	}
	host := yamlx.GetStr(a.UIService.YNode(), "metadata", "annotations", names.AnnotationRouteHost)
	if v, ok := conf[KeyProxyRedirectURI]; ok {
		if (v == "/" && prefix != "/") || (host != "" && (v == "https://"+host || v == "http://"+host)) {
			ops = append(ops, ConfOp{Key: KeyProxyRedirectURI})
		}
	}
	return ops
}
