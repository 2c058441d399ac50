package app

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// The route objects sparkui writes for an application (docs/routes.md), by apiVersion and
// kind: each application has at most one of each, named like its UI Service and labelled
// like everything sparkui adds.
const (
	GatewayAPIVersion   = "gateway.networking.k8s.io/v1"
	IngressAPIVersion   = "networking.k8s.io/v1"
	OpenShiftAPIVersion = "route.openshift.io/v1"
)

// RouteObjectKinds are the route objects' kinds with their apiVersions.
var RouteObjectKinds = map[string]string{
	"HTTPRoute": GatewayAPIVersion,
	"GRPCRoute": GatewayAPIVersion,
	"Ingress":   IngressAPIVersion,
	"Route":     OpenShiftAPIVersion,
}

func isRouteObject(av, kind string) bool {
	want, ok := RouteObjectKinds[kind]
	return ok && want == av
}

// attachRoutes claims the route objects sparkui wrote for a before, by kind. Where the input
// has several of one kind, the one named like a's UI Service (the name sparkui gives it) is
// a's, else the first; the others are ExtraRoutes.
func (ix *index) attachRoutes(a *App) {
	id := identityKey(a.IdentityKey, a.IdentityValue)
	for _, kind := range routeKindOrder {
		var mine []*yaml.RNode
		for {
			rn := ix.claim(ix.ourRoutes[kindKey{kind, a.Namespace, id}])
			if rn == nil {
				break
			}
			mine = append(mine, rn)
		}
		if len(mine) == 0 {
			continue
		}
		keep := 0
		for i, rn := range mine {
			if _, name := Meta(rn); name == a.UIServiceName {
				keep = i
				break
			}
		}
		if a.Routes == nil {
			a.Routes = map[string]*yaml.RNode{}
		}
		a.Routes[kind] = mine[keep]
		for i, rn := range mine {
			if i != keep {
				a.ExtraRoutes = append(a.ExtraRoutes, rn)
			}
		}
	}
}

// routeKindOrder is RouteObjectKinds in a fixed order, for results in a stable order.
var routeKindOrder = []string{"HTTPRoute", "GRPCRoute", "Ingress", "Route"}

// indexRoute records a route object of the input: every Ingress for the rules about
// operators' Ingresses, and sparkui's own routes by identity.
func (ix *index) indexRoute(it *yaml.RNode, kind, ns string) {
	if kind == "Ingress" {
		ix.model.Ingresses = append(ix.model.Ingresses, it)
	}
	l := Labels(it)
	if l[names.LabelManagedBy] != names.ManagedByValue {
		_, name := Meta(it)
		if ix.model.ForeignRoutes == nil {
			ix.model.ForeignRoutes = map[string]*yaml.RNode{}
		}
		ix.model.ForeignRoutes[kind+"/"+ns+"/"+name] = it
		return
	}
	for _, id := range identities(l) {
		k := kindKey{kind, ns, id}
		ix.ourRoutes[k] = append(ix.ourRoutes[k], it)
	}
}

// ConfWritable reports whether sparkui can write a's Spark conf: an operator's sparkConf,
// or a spark-submit Pod's driver ConfigMap in the input. A workload's conf (args, a mounted
// spark-defaults.conf, the functionConfig's sparkConf) is not written (SUI049 says what to
// add).
func (a *App) ConfWritable() bool {
	return (a.Carrier != nil && a.Carrier.ConfPath != "") || (a.ConfigMap != nil && a.ConfError == nil && a.ConfSource == FromConfigMap)
}

// BasePath is the path of the part of the carrier that holds the driver: a
// SparkApplicationSpec ("spec", or "spec.template" in a ScheduledSparkApplication), a
// workload's pod template; nil for a Pod.
func (c *Carrier) BasePath() []string { return c.base }

// RoutePrefix is the route prefix sparkui recorded on a's UI Service
// (names.AnnotationRoutePrefix), and whether there is one.
func (a *App) RoutePrefix() (string, bool) { return RoutePrefixOf(a.UIService) }

// RoutePrefixOf is RoutePrefix read from the UI Service svc (nil: none).
func RoutePrefixOf(svc *yaml.RNode) (string, bool) {
	if svc == nil {
		return "", false
	}
	v := yamlx.Get(svc.YNode(), "metadata", "annotations", names.AnnotationRoutePrefix)
	if v == nil || v.Kind != yaml.ScalarNode {
		return "", false
	}
	return v.Value, true
}

// ForeignRoute is the route object of the input, not sparkui's, of this kind, namespace and
// name; nil when none.
func (m *Model) ForeignRoute(kind, ns, name string) *yaml.RNode {
	return m.ForeignRoutes[kind+"/"+ns+"/"+name]
}
