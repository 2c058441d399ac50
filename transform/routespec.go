package transform

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// The route objects' specs, one function a kind (the route planned in route.go).

// connectPort is the port Spark Connect's gRPC server binds.
func connectPort(a *app.App) int {
	if n, err := strconv.Atoi(strings.TrimSpace(a.Props[sparkconf.KeyConnectPort])); err == nil && n > 0 && n < 65536 {
		return n
	}
	return DefaultConnectPort
}

func parentRefs(o RouteOptions) *yaml.Node {
	s := yamlx.NewSeq()
	for _, p := range o.ParentRefs {
		m := yamlx.NewMap("group", "gateway.networking.k8s.io", "kind", "Gateway", "name", p.Name)
		if p.Namespace != "" {
			yamlx.Set(m, "namespace", yamlx.NewStr(p.Namespace))
		}
		if p.SectionName != "" {
			yamlx.Set(m, "sectionName", yamlx.NewStr(p.SectionName))
		}
		s.Content = append(s.Content, m)
	}
	return s
}

// httpRouteSpec matches the prefix, strips it (Spark serves at the root) and tells Spark the
// prefix in X-Forwarded-Context, which UIUtils.uiRoot uses when spark.ui.proxyBase is not a
// system property (a conf sparkui could not write, a PySpark session's builder conf); it names
// the backend Service in X-Sparkui-Service at any prefix. URLRewrite is an Extended filter of
// the Gateway API, RequestHeaderModifier a Core one.
func httpRouteSpec(a *app.App, o RouteOptions, f routeFacts, port int) *yaml.Node {
	spec := yamlx.NewMap("parentRefs", parentRefs(o))
	if f.host != "" {
		yamlx.Set(spec, "hostnames", yamlx.NewSeq(f.host))
	}
	rule := yamlx.NewMap("matches", yamlx.NewSeq(yamlx.NewMap("path", yamlx.NewMap("type", "PathPrefix", "value", f.prefix))))
	filters := yamlx.NewSeq()
	set := yamlx.NewSeq()
	if f.prefix != "/" {
		filters.Content = append(filters.Content,
			yamlx.NewMap("type", "URLRewrite", "urlRewrite", yamlx.NewMap("path", yamlx.NewMap("type", "ReplacePrefixMatch", "replacePrefixMatch", "/"))))
		set.Content = append(set.Content, yamlx.NewMap("name", names.HeaderForwardedContext, "value", f.prefix))
	}
	// The backend Service's name, for the history redirector (docs/history.md): "set" replaces
	// a client's value, so the redirector answers from this Service alone.
	set.Content = append(set.Content, yamlx.NewMap("name", names.HeaderUIService, "value", a.UIServiceName))
	filters.Content = append(filters.Content, yamlx.NewMap("type", "RequestHeaderModifier", "requestHeaderModifier", yamlx.NewMap("set", set)))
	yamlx.Set(rule, "filters", filters)
	yamlx.Set(rule, "backendRefs", yamlx.NewSeq(yamlx.NewMap("group", "", "kind", "Service", "name", a.UIServiceName, "port", port)))
	yamlx.Set(spec, "rules", yamlx.NewSeq(rule))
	return spec
}

// grpcRouteSpec sends every gRPC call of its own host to the UI Service's spark-connect
// port: Spark Connect's services are all under one server, so no method match is needed.
func grpcRouteSpec(a *app.App, o RouteOptions, f routeFacts) *yaml.Node {
	spec := yamlx.NewMap("parentRefs", parentRefs(o), "hostnames", yamlx.NewSeq(f.grpcHost))
	rule := yamlx.NewMap("backendRefs", yamlx.NewSeq(yamlx.NewMap("group", "", "kind", "Service", "name", a.UIServiceName, "port", DefaultConnectPort)))
	yamlx.Set(spec, "rules", yamlx.NewSeq(rule))
	return spec
}

// ingressSpec is controller-neutral: spec.ingressClassName, no annotation; its only prefix
// is "/" (config check), which every implementation serves the same way.
func ingressSpec(a *app.App, o RouteOptions, f routeFacts, port int) *yaml.Node {
	spec := yamlx.NewMap()
	if o.IngressClassName != "" {
		yamlx.Set(spec, "ingressClassName", yamlx.NewStr(o.IngressClassName))
	}
	if o.TLSSecret != "" {
		yamlx.Set(spec, "tls", yamlx.NewSeq(yamlx.NewMap("hosts", yamlx.NewSeq(f.host), "secretName", o.TLSSecret)))
	}
	backend := yamlx.NewMap("service", yamlx.NewMap("name", a.UIServiceName, "port", yamlx.NewMap("number", port)))
	path := yamlx.NewMap("path", f.prefix, "pathType", "Prefix", "backend", backend)
	yamlx.Set(spec, "rules", yamlx.NewSeq(yamlx.NewMap("host", f.host, "http", yamlx.NewMap("paths", yamlx.NewSeq(path)))))
	return spec
}

// openShiftRouteSpec targets the UI Service's port by name: a Route's port.targetPort names
// an endpoint port, and the number behind the name is whatever the runtime bound. The
// prefix is stripped by the router's rewrite-target annotation (routeAnnotations) and sent
// in X-Forwarded-Context through spec.httpHeaders (route.openshift.io/v1 RouteHTTPHeaders),
// which also names the backend Service in X-Sparkui-Service.
// TLS is edge-terminated with the certificate of a Secret (spec.tls.externalCertificate).
func openShiftRouteSpec(a *app.App, o RouteOptions, f routeFacts, portName string) *yaml.Node {
	spec := yamlx.NewMap("host", f.host)
	if f.prefix != "/" {
		yamlx.Set(spec, "path", yamlx.NewStr(f.prefix))
	}
	yamlx.Set(spec, "to", yamlx.NewMap("kind", "Service", "name", a.UIServiceName, "weight", 100))
	yamlx.Set(spec, "port", yamlx.NewMap("targetPort", portName))
	if o.TLSSecret != "" {
		yamlx.Set(spec, "tls", yamlx.NewMap("termination", "edge", "insecureEdgeTerminationPolicy", "Redirect",
			"externalCertificate", yamlx.NewMap("name", o.TLSSecret)))
	}
	setHeader := func(name, value string) *yaml.Node {
		return yamlx.NewMap("name", name, "action", yamlx.NewMap("type", "Set", "set", yamlx.NewMap("value", value)))
	}
	request := yamlx.NewSeq()
	if f.prefix != "/" {
		request.Content = append(request.Content, setHeader(names.HeaderForwardedContext, f.prefix))
	}
	// The backend Service's name, for the history redirector, as on an HTTPRoute.
	request.Content = append(request.Content, setHeader(names.HeaderUIService, a.UIServiceName))
	yamlx.Set(spec, "httpHeaders", yamlx.NewMap("actions", yamlx.NewMap("request", request)))
	return spec
}

// wantRoutes are the route objects a needs, by kind, each as its spec (and, for an OpenShift
// Route, the rewrite annotation's value, "" for none).
type wantRoute struct {
	kind, rewrite string
	spec          *yaml.Node
}

func wantRoutes(a *app.App, o Options, f routeFacts) []wantRoute {
	port := FrontPort(a, o)
	switch o.Route.Kind {
	case RouteHTTPRoute:
		out := []wantRoute{{kind: "HTTPRoute", spec: httpRouteSpec(a, o.Route, f, port)}}
		if o.Route.GRPC {
			out = append(out, wantRoute{kind: "GRPCRoute", spec: grpcRouteSpec(a, o.Route, f)})
		}
		return out
	case RouteIngress:
		return []wantRoute{{kind: "Ingress", spec: ingressSpec(a, o.Route, f, port)}}
	case RouteOpenShift:
		rw := ""
		if f.prefix != "/" {
			rw = "/"
		}
		return []wantRoute{{kind: "Route", rewrite: rw, spec: openShiftRouteSpec(a, o.Route, f, uiPortName(a))}}
	}
	return nil
}

func uiPortName(a *app.App) string {
	if a.Settings.TLS {
		return "https"
	}
	return "spark-ui"
}
