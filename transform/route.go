package transform

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// RouteKind is the route object the functionConfig asks for (spec.route.kind).
type RouteKind string

const (
	RouteNone      RouteKind = "none"
	RouteHTTPRoute RouteKind = "HTTPRoute"
	RouteIngress   RouteKind = "Ingress"
	RouteOpenShift RouteKind = "Route"
)

// RouteOptions is the functionConfig's spec.route.
type RouteOptions struct {
	Kind RouteKind
	// Hostname and PathPrefix are templates: {namespace} and {name} (the carrier object's
	// name) are expanded per application.
	Hostname, PathPrefix string
	ParentRefs           []ParentRef
	IngressClassName     string
	TLSSecret            string
	GRPC                 bool
	// GRPCHostname is the GRPCRoute's hostname (a template too).
	GRPCHostname string
}

// ParentRef is a Gateway an HTTPRoute or GRPCRoute attaches to.
type ParentRef struct{ Name, Namespace, SectionName string }

// Spark properties the route sets (docs/routes.md has what Spark does with them).
const (
	KeyProxyBase        = sparkconf.KeyProxyBase
	KeyProxyRedirectURI = sparkconf.KeyProxyRedirectURI
	// AnnotationRewriteTarget is the OpenShift router's own prefix rewrite: part of the
	// Route API of the platform (its only way to strip a path), not a third-party controller's.
	AnnotationRewriteTarget = "haproxy.router.openshift.io/rewrite-target"
	// DefaultConnectPort is spark.connect.grpc.binding.port's default
	// (connector/connect/server's Connect.scala CONNECT_GRPC_BINDING_PORT).
	DefaultConnectPort = 15002
)

var placeholders = strings.NewReplacer("{namespace}", "x", "{name}", "x")

// CheckPathPrefix says what is wrong with a pathPrefix template, "" when nothing. The rules
// are the Gateway API's for a PathPrefix match value (HTTPPathMatch in
// sigs.k8s.io/gateway-api apis/v1/httproute_types.go), which the other kinds also accept,
// plus: no trailing slash, since Spark's links are uiRoot + "/static/…" (UIUtils.prependBaseUri)
// and would begin with "//".
func CheckPathPrefix(p string) string {
	if !strings.HasPrefix(p, "/") {
		return "is not an absolute path (it must start with /)"
	}
	x, msg := TemplateSample(p)
	if msg != "" || x == "/" {
		return msg
	}
	if strings.HasSuffix(x, "/") {
		return "ends with /: Spark's links would start with // (write it without the trailing slash)"
	}
	for _, seg := range strings.Split(x[1:], "/") {
		switch seg {
		case "":
			return "has an empty path segment (//)"
		case ".", "..":
			return "has a " + seg + " segment"
		}
	}
	for i := 0; i < len(x); i++ {
		c := x[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-._~!$&'()*+,;=:@", c) >= 0 {
			continue
		}
		return fmt.Sprintf("has the character %q, which a path prefix match does not accept", c)
	}
	return ""
}

// TemplateSample checks the placeholders of a route template and returns it with each
// replaced by a sample value, for the checks of what it expands to; msg says what is wrong.
func TemplateSample(tpl string) (sample, msg string) {
	rest := tpl
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", "has an unclosed {"
		}
		if ph := rest[i : i+j+1]; ph != "{namespace}" && ph != "{name}" {
			return "", "has the placeholder " + ph + ": only {namespace} and {name} are known"
		}
		rest = rest[i+j+1:]
	}
	x := placeholders.Replace(tpl)
	if strings.ContainsAny(x, "{}") {
		return "", "has a } without {"
	}
	return x, ""
}

// expand fills the placeholders of a route template for a.
func expand(tpl string, a *app.App) string {
	name := ""
	if a.Carrier != nil {
		name = a.Carrier.Name
	}
	return strings.NewReplacer("{namespace}", a.Namespace, "{name}", name).Replace(tpl)
}

// routeFacts is the route of one application, templates expanded.
type routeFacts struct {
	host, prefix, grpcHost string
	// tls: TLS terminates before Spark and sparkui knows it (an Ingress or Route with a
	// certificate Secret).
	tls bool
}

func (o RouteOptions) enabled() bool { return o.Kind != "" && o.Kind != RouteNone }

// resolveRoute expands the templates for a and checks the result, which only now is known
// (a {namespace} of an object without one, a {name} that is no DNS label part).
func resolveRoute(a *app.App, o RouteOptions) (routeFacts, string) {
	f := routeFacts{host: expand(o.Hostname, a), prefix: expand(o.PathPrefix, a), grpcHost: expand(o.GRPCHostname, a), tls: o.TLSSecret != ""}
	uses := func(ph string) bool {
		return strings.Contains(o.Hostname, ph) || strings.Contains(o.PathPrefix, ph) || strings.Contains(o.GRPCHostname, ph)
	}
	if uses("{namespace}") && a.Namespace == "" {
		return f, "the route uses {namespace} but the object has no metadata.namespace: set it (e.g. kustomize's namespace:) so the route's URL is known at build time"
	}
	if msg := CheckPathPrefix(f.prefix); msg != "" {
		return f, fmt.Sprintf("the route's path prefix %q %s", f.prefix, msg)
	}
	var msgs []string
	for _, p := range checkRouteValues(o.Kind, f.host, f.grpcHost, f.prefix) {
		v := map[string]string{"hostname": f.host, "grpcHostname": f.grpcHost, "pathPrefix": f.prefix}[p.Field]
		msgs = append(msgs, fmt.Sprintf("spec.route.%s expands to %q, which %s", p.Field, v, p.Msg))
	}
	return f, strings.Join(msgs, "; ")
}

// wantProxyConf is what the route needs in Spark's conf, "" meaning absent. Spark serves its
// UI at the root whatever spark.ui.proxyBase says: JettyUtils.createServletHandler mounts
// each page at basePath + path, with basePath "" for a live application, and proxyBase only
// prefixes the links and redirects it writes (UIUtils.uiRoot, read from the system property
// that SparkSubmit's JavaMainApplication copies from the conf). So the route strips the
// prefix and proxyBase puts it back in the links. Spark's redirects (/ → /jobs/, Jetty's
// trailing-slash ones) carry the prefix only through ProxyRedirectHandler, which JettyUtils
// installs when spark.ui.proxyRedirectUri is set: Location = proxyRedirectUri + uiRoot +
// path. "/" makes that a path on whatever host and scheme Spark saw (what the kubeflow
// operator sets for its own prefixed Ingress); https://<host> where TLS ends before Spark,
// which otherwise would send the browser to http://.
func wantProxyConf(f routeFacts, cur map[string]string) (proxyBase, redirect string) {
	if f.prefix != "/" {
		proxyBase = f.prefix
	}
	if proxyBase == "" && !f.tls {
		// At the root without TLS Spark's own redirects are right: whatever is set stays.
		return proxyBase, cur[KeyProxyRedirectURI]
	}
	switch c := cur[KeyProxyRedirectURI]; {
	case c != "" && f.host != "" && (c == "https://"+f.host || c == "http://"+f.host) && !(f.tls && c == "http://"+f.host):
		// A choice of scheme for this host is the user's to make (https://<host> behind an
		// HTTPS Gateway listener, which sparkui cannot see); another host is stale.
		redirect = c
	case f.tls && f.host != "":
		redirect = "https://" + f.host
	case proxyBase != "":
		redirect = "/"
	}
	return proxyBase, redirect
}

// routeConf is the proxy settings of a's conf, as conf operations, where sparkui can write
// them. A spark.ui.proxyBase that sparkui did not write (not the prefix the UI Service
// recorded, the previous prefix when there was one) and that the route replaces or removes is
// said in the returned note: it may be the user's own, for another proxy.
func routeConf(a *app.App, f routeFacts, prevPrefix string, hadPrev bool) ([]ConfOp, *Note) {
	if !a.ConfWritable() {
		return nil, nil
	}
	base, redirect := wantProxyConf(f, a.Props)
	var note *Note
	if old, ok := a.Props[KeyProxyBase]; ok && old != base && !(hadPrev && old == prevPrefix) {
		now := "removed it: the route serves the UI at the root"
		if base != "" {
			now = "set it to " + base + ", the route's prefix"
		}
		obj, field := a.Object, a.ConfField(KeyProxyBase)
		if a.Carrier == nil || a.Carrier.ConfPath == "" {
			obj, field = a.ConfigMap, fieldpath.Key("data", names.SparkPropertiesKey)
		}
		note = &Note{App: a, Object: obj, Field: field, Rule: "SUI044", Warning: true,
			Msg: "spark.ui.proxyBase was " + strconv.Quote(old) + ", which contradicts the route; sparkui " + now +
				" (Spark serves the UI at the root and writes proxyBase before every link, so another value sends links outside the route)"}
	}
	return []ConfOp{{KeyProxyBase, base}, {KeyProxyRedirectURI, redirect}}, note
}

// routePlan is a's route: route objects to add, to bring back to what is wanted in place
// (keeping their other labels and annotations) and to remove (those of another kind sparkui
// wrote before, and second ones of a kind); the route facts the UI Service records (nil: its
// route annotations and ports are left as they are) and the proxy settings of the conf.
type routePlan struct {
	add, remove []*yaml.RNode
	update      []Update
	notes       []Note
	facts       *routeFacts
	conf        []ConfOp
}

// planRoute computes a's routePlan; svc is a's existing UI Service, nil when sparkui adds it.
func planRoute(m *app.Model, a *app.App, svc *yaml.RNode, o Options) routePlan {
	var p routePlan
	p.remove, p.notes = dropExtraRoutes(a)
	if !o.Route.enabled() {
		return p
	}
	f, problem := resolveRoute(a, o.Route)
	if problem != "" {
		p.notes = append(p.notes, Note{App: a, Object: a.Object, Rule: "SUI053", Error: true, Msg: problem + "; sparkui writes no route for it"})
		return p
	}
	wants := wantRoutes(a, o, f)
	for _, w := range wants {
		if other := m.ForeignRoute(w.kind, a.Namespace, a.UIServiceName); other != nil && a.Routes[w.kind] == nil {
			p.notes = append(p.notes, Note{App: a, Object: other, Rule: "SUI053", Error: true, Field: "metadata.name",
				Msg: "the input already has " + w.kind + " " + nsSlash(a.Namespace, a.UIServiceName) + ", which is not sparkui's: applied, one would replace the other; rename it, or label it app.kubernetes.io/managed-by: sparkui and " +
					a.IdentityKey + ": " + a.IdentityValue + " to let sparkui manage it; sparkui writes no route for this application"})
			return p
		}
	}
	want := map[string]bool{}
	for _, w := range wants {
		want[w.kind] = true
		md := ownMeta(a, a.UIServiceName)
		if w.rewrite != "" {
			yamlx.Set(md, "annotations", yamlx.NewMap(AnnotationRewriteTarget, w.rewrite))
		}
		obj := object(app.RouteObjectKinds[w.kind], w.kind, md, "spec", w.spec)
		if rn := a.Routes[w.kind]; rn != nil {
			p.update = append(p.update, Update{Object: rn, Want: obj})
		} else {
			p.add = append(p.add, obj)
		}
	}
	for _, kind := range []string{"HTTPRoute", "GRPCRoute", "Ingress", "Route"} {
		if rn := a.Routes[kind]; rn != nil && !want[kind] {
			p.remove = append(p.remove, rn)
		}
	}
	p.facts = &f
	prevPrefix, hadPrev := app.RoutePrefixOf(svc)
	var note *Note
	if p.conf, note = routeConf(a, f, prevPrefix, hadPrev); note != nil {
		p.notes = append(p.notes, *note)
	}
	return p
}

// reconcileRoute brings sparkui's existing route rn back to want, keeping its other labels and
// annotations.
func reconcileRoute(a *app.App, rn, want *yaml.RNode) {
	ensureOwnMeta(rn, a, a.UIServiceName)
	yamlx.SetIfChanged(rn.YNode(), "apiVersion", yamlx.Get(want.YNode(), "apiVersion"))
	md := yamlx.Get(rn.YNode(), "metadata")
	if rw := yamlx.Get(want.YNode(), "metadata", "annotations", AnnotationRewriteTarget); rw != nil {
		yamlx.SetIfChanged(yamlx.Ensure(md, "annotations"), AnnotationRewriteTarget, rw)
	} else if ann := yamlx.Get(md, "annotations"); ann != nil {
		yamlx.Delete(ann, AnnotationRewriteTarget)
		if len(ann.Content) == 0 {
			yamlx.Delete(md, "annotations")
		}
	}
	yamlx.SetIfChanged(rn.YNode(), "spec", yamlx.Get(want.YNode(), "spec"))
}

// dropExtraRoutes removes the further sparkui routes of a kind a already has (SUI055): one
// route per kind is what sparkui writes, and two would each be routed. The one kept
// (app.attachRoutes) is the one named like the UI Service, so the object the cluster has
// under sparkui's name is updated in place; the others leave the output, which a pruning
// apply (kubectl apply --prune, Argo CD, Flux) deletes.
func dropExtraRoutes(a *app.App) (removed []*yaml.RNode, notes []Note) {
	for _, rn := range a.ExtraRoutes {
		kind := yamlx.GetStr(rn.YNode(), "kind")
		ns, name := app.Meta(rn)
		kept := ""
		if k := a.Routes[kind]; k != nil {
			kns, kname := app.Meta(k)
			kept = ", keeping " + nsSlash(kns, kname)
		}
		removed = append(removed, rn)
		notes = append(notes, Note{App: a, Object: rn, Rule: "SUI055",
			Msg: "removed " + kind + " " + nsSlash(ns, name) + ": a second sparkui " + kind + " for this application" + kept + " (one route of each kind per application)"})
	}
	return removed, notes
}

// annotateUIService writes the route's build-time facts on the UI Service.
func annotateUIService(svc *yaml.RNode, f routeFacts) {
	ann := yamlx.Ensure(yamlx.Get(svc.YNode(), "metadata"), "annotations")
	if f.host != "" {
		yamlx.SetIfChanged(ann, names.AnnotationRouteHost, yamlx.NewStr(f.host))
	} else {
		yamlx.Delete(ann, names.AnnotationRouteHost)
	}
	yamlx.SetIfChanged(ann, names.AnnotationRoutePrefix, yamlx.NewStr(f.prefix))
}

// setConnectPort adds (or removes) the UI Service's second port, spark-connect, after the UI
// port: the runtime's bind and withdrawal patch /spec/ports/0 only (runtime/binder), so a
// second port is not theirs. Its targetPort is declared: Spark Connect's port does not move
// by default (spark.connect.grpc.port.maxRetries is 0, "fail fast in case of port
// conflicts", connect/server's config/Connect.scala), and the port routes only while the
// runtime's selector is in place.
func setConnectPort(a *app.App, svc *yaml.RNode, on bool) {
	spec := yamlx.Ensure(svc.YNode(), "spec")
	ports := yamlx.Get(spec, "ports")
	items := yamlx.Items(ports)
	if len(items) == 0 {
		return
	}
	ports.Content = ports.Content[:1]
	if on {
		want := yamlx.NewMap("name", names.ConnectPortName, "protocol", "TCP", "port", DefaultConnectPort, "targetPort", connectPort(a))
		if len(items) > 1 && yamlx.Equal(items[1], want) {
			want = items[1]
		}
		ports.Content = append(ports.Content, want)
	}
}
