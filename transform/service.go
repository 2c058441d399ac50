package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// FrontPort is the UI Service's port: the configured one, else what Spark binds first.
func FrontPort(a *app.App, o Options) int {
	if o.ServicePort > 0 {
		return o.ServicePort
	}
	return a.Settings.FrontPort()
}

// NewUIService builds the UI Service for a. It declares no field the runtime writes: no
// selector, so nothing is routed before the runtime has found the UI, and no targetPort (the
// API server defaults it to the port), so a re-apply of the manifests keeps the runtime's bind.
// Flux alone would still reset the targetPort: it is told to create the Service only
// (names.AnnotationFluxSSA).
func NewUIService(a *app.App, o Options) *yaml.RNode {
	md := ownMeta(a, a.UIServiceName)
	ann := yamlx.NewMap(names.AnnotationFluxSSA, names.FluxSSAIfNotPresent)
	if o.ExternalURI == sidecar.ExternalURIAnnotation {
		yamlx.Set(ann, names.AnnotationProvideExternalURI, yamlx.NewStr("true"))
	}
	yamlx.Set(md, "annotations", ann)
	spec := yamlx.NewMap("type", serviceType(o))
	copyIPFamilies(a, spec)
	yamlx.Set(spec, "ports", yamlx.NewSeq(uiPort(a, o)))
	return object("v1", "Service", md, "spec", spec)
}

func serviceType(o Options) string {
	if o.ServiceType == "" {
		return "ClusterIP"
	}
	return o.ServiceType
}

func uiPort(a *app.App, o Options) *yaml.Node {
	port := FrontPort(a, o)
	return yamlx.NewMap("name", sidecar.PortName(a.Settings.TLS), "protocol", "TCP", "port", port)
}

// copyIPFamilies makes spec's ipFamilyPolicy and ipFamilies those of the driver Service: a
// UI Service of another family would not reach a single-stack driver. Carriers other than a
// spark-submit Pod have no driver Service yet: Spark will make it from
// spark.kubernetes.driver.service.ipFamilyPolicy/ipFamilies, which are copied instead.
func copyIPFamilies(a *app.App, spec *yaml.Node) {
	var src *yaml.Node
	if a.DriverService != nil {
		src = yamlx.Get(a.DriverService.YNode(), "spec")
	} else {
		src = app.WantIPFamilies(a)
	}
	for _, k := range []string{"ipFamilyPolicy", "ipFamilies"} {
		if v := yamlx.Get(src, k); v != nil {
			yamlx.SetIfChanged(spec, k, deepCopy(v))
		} else {
			yamlx.Delete(spec, k)
		}
	}
}

// wantUIService is the UI Service sparkui wants for a: NewUIService's, with the route's
// facts recorded and the spark-connect port when a route is planned (rp.facts).
func wantUIService(a *app.App, o Options, rp *routePlan) *yaml.RNode {
	svc := NewUIService(a, o)
	if rp.facts != nil {
		annotateUIService(svc, *rp.facts)
		setConnectPort(a, svc, o.Route.GRPC)
	}
	return svc
}

// reconcileUIService brings an existing UI Service back to want (wantUIService), keeping
// everything else on it (user annotations, a chosen nodePort) but the fields the runtime
// writes, which an older sparkui output or a hand edit may declare. The route's annotations
// and ports are touched only when want records a route.
func reconcileUIService(a *app.App, rn, want *yaml.RNode) {
	ensureOwnMeta(rn, a, a.UIServiceName)
	for _, f := range app.RuntimeOwnedFields(rn.YNode()) {
		removeRuntimeOwned(rn.YNode(), f)
	}
	wantAnn := yamlx.Get(want.YNode(), "metadata", "annotations")
	ann := yamlx.Ensure(yamlx.Get(rn.YNode(), "metadata"), "annotations")
	if !app.FluxCreatesOnly(rn.YNode()) {
		yamlx.Set(ann, names.AnnotationFluxSSA, yamlx.NewStr(names.FluxSSAIfNotPresent))
	}
	if v := yamlx.Get(wantAnn, names.AnnotationProvideExternalURI); v != nil {
		yamlx.SetIfChanged(ann, names.AnnotationProvideExternalURI, v)
	}
	wantSpec := yamlx.Get(want.YNode(), "spec")
	spec := yamlx.Ensure(rn.YNode(), "spec")
	yamlx.Delete(spec, "selector")
	yamlx.SetIfChanged(spec, "type", yamlx.Get(wantSpec, "type"))
	for _, k := range []string{"ipFamilyPolicy", "ipFamilies"} {
		if v := yamlx.Get(wantSpec, k); v != nil {
			yamlx.SetIfChanged(spec, k, v)
		} else {
			yamlx.Delete(spec, k)
		}
	}
	reconcilePorts(spec, wantSpec)
	if prefix := yamlx.Get(wantAnn, names.AnnotationRoutePrefix); prefix != nil {
		if host := yamlx.Get(wantAnn, names.AnnotationRouteHost); host != nil {
			yamlx.SetIfChanged(ann, names.AnnotationRouteHost, host)
		} else {
			yamlx.Delete(ann, names.AnnotationRouteHost)
		}
		yamlx.SetIfChanged(ann, names.AnnotationRoutePrefix, prefix)
		reconcileConnectPort(spec, wantSpec)
	}
}

// reconcilePorts makes the first port want's (its other fields, such as a chosen nodePort,
// kept unless the type is ClusterIP) and drops any other: the runtime's bind and withdrawal
// patch /spec/ports/0 only.
func reconcilePorts(spec, wantSpec *yaml.Node) {
	want := yamlx.Items(yamlx.Get(wantSpec, "ports"))[0]
	ports := yamlx.Get(spec, "ports")
	var cur *yaml.Node
	if items := yamlx.Items(ports); len(items) > 0 && items[0].Kind == yaml.MappingNode {
		cur = items[0]
	}
	if cur == nil {
		yamlx.Set(spec, "ports", yamlx.NewSeq(want))
		return
	}
	ports.Content = ports.Content[:1]
	yamlx.Pairs(want, func(k, v *yaml.Node) { yamlx.SetIfChanged(cur, k.Value, v) })
	if yamlx.GetStr(wantSpec, "type") == "ClusterIP" {
		yamlx.Delete(cur, "nodePort")
	}
}

// reconcileConnectPort gives spec, whose ports reconcilePorts left at the UI port alone,
// want's second port, spark-connect, when want has one (setConnectPort).
func reconcileConnectPort(spec, wantSpec *yaml.Node) {
	ports := yamlx.Get(spec, "ports")
	if w := yamlx.Items(yamlx.Get(wantSpec, "ports")); len(w) > 1 && len(yamlx.Items(ports)) > 0 {
		ports.Content = append(ports.Content[:1], w[1])
	}
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = deepCopy(e)
	}
	return &c
}

// removeRuntimeOwned deletes a field the runtime writes from the UI Service svc, and an
// annotations map that leaves empty.
func removeRuntimeOwned(svc *yaml.Node, f app.RuntimeOwned) {
	yamlx.Delete(f.Parent, f.Key)
	md := yamlx.Get(svc, "metadata")
	if ann := yamlx.Get(md, "annotations"); ann == f.Parent && len(ann.Content) == 0 {
		yamlx.Delete(md, "annotations")
	}
}
