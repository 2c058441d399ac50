package function

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/transform"
	"github.com/sparkui/sparkui/validate"
)

// parseParentRef reads the ConfigMap form of one parentRef: "name", "namespace/name" or
// "namespace/name/sectionName".
func parseParentRef(s string) (map[string]any, bool) {
	parts := strings.Split(s, "/")
	for _, p := range parts {
		if p == "" {
			return nil, false
		}
	}
	switch len(parts) {
	case 1:
		return map[string]any{"name": parts[0]}, true
	case 2:
		return map[string]any{"namespace": parts[0], "name": parts[1]}, true
	case 3:
		return map[string]any{"namespace": parts[0], "name": parts[1], "sectionName": parts[2]}, true
	}
	return nil, false
}

func applyRoute(get func(path ...string) (any, bool), r *transform.RouteOptions) {
	str := func(path ...string) string {
		v, _ := get(append([]string{"spec", "route"}, path...)...)
		s, _ := v.(string)
		return s
	}
	r.Kind = transform.RouteKind(str("kind"))
	if r.Kind == "" {
		r.Kind = transform.RouteNone
	}
	r.Hostname = str("hostname")
	r.GRPCHostname = str("grpcHostname")
	r.PathPrefix = str("pathPrefix")
	if r.PathPrefix == "" {
		r.PathPrefix = "/"
	}
	r.IngressClassName = str("ingressClassName")
	r.TLSSecret = str("tls", "secretName")
	if v, ok := get("spec", "route", "grpc"); ok {
		r.GRPC, _ = v.(bool)
	}
	if v, ok := get("spec", "route", "parentRefs"); ok {
		for _, item := range v.([]any) {
			m := item.(map[string]any)
			ref := transform.ParentRef{}
			ref.Name, _ = m["name"].(string)
			ref.Namespace, _ = m["namespace"].(string)
			ref.SectionName, _ = m["sectionName"].(string)
			r.ParentRefs = append(r.ParentRefs, ref)
		}
	}
}

// checkRoute checks what the schema cannot say about spec.route: names the API server
// accepts, a prefix every route kind can match, and the fields each kind needs.
func checkRoute(fc *yaml.RNode, r transform.RouteOptions, pathOf func(string) string) framework.Results {
	var out framework.Results
	bad := func(ptr, format string, args ...any) {
		out = append(out, validate.ConfigError(fc, pathOf("/spec/route/"+ptr), fmt.Sprintf(format, args...)))
	}
	dns := func(ptr, what, v string, check func(string) []string) {
		if v == "" {
			return
		}
		if errs := check(v); len(errs) > 0 {
			bad(ptr, "%q is not %s: %s", v, what, strings.Join(errs, "; "))
		}
	}
	for _, h := range []struct{ ptr, v string }{{"hostname", r.Hostname}, {"grpcHostname", r.GRPCHostname}} {
		if _, msg := transform.TemplateSample(h.v); msg != "" {
			bad(h.ptr, "%q %s", h.v, msg)
		}
	}
	// What the route's API would refuse whatever the application (the placeholders at their
	// shortest); what only some expansions break is SUI053, for those applications alone.
	for _, p := range transform.CheckRouteTemplates(r) {
		v := map[string]string{"hostname": r.Hostname, "grpcHostname": r.GRPCHostname, "pathPrefix": r.PathPrefix}[p.Field]
		bad(p.Field, "%q %s", v, p.Msg)
	}
	dns("ingressClassName", "an IngressClass name", r.IngressClassName, validation.IsDNS1123Subdomain)
	dns("tls/secretName", "a Secret name", r.TLSSecret, validation.IsDNS1123Subdomain)
	for i, p := range r.ParentRefs {
		at := fmt.Sprintf("parentRefs/%d/", i)
		dns(at+"name", "a Gateway name", p.Name, validation.IsDNS1123Subdomain)
		dns(at+"namespace", "a namespace name", p.Namespace, validation.IsDNS1123Label)
		dns(at+"sectionName", "a listener name", p.SectionName, validation.IsDNS1123Subdomain)
	}
	if msg := transform.CheckPathPrefix(r.PathPrefix); msg != "" {
		bad("pathPrefix", "%q %s", r.PathPrefix, msg)
	}
	switch r.Kind {
	case transform.RouteNone:
		return out
	case transform.RouteHTTPRoute:
		if len(r.ParentRefs) == 0 {
			bad("parentRefs", "an HTTPRoute needs the Gateway it attaches to")
		}
		if r.TLSSecret != "" {
			bad("tls/secretName", "an HTTPRoute's TLS is set on its Gateway's listener, not on the route")
		}
		if r.IngressClassName != "" {
			bad("ingressClassName", "is for kind Ingress only")
		}
		// A listener accepts only one of an HTTPRoute and a GRPCRoute whose hostnames
		// intersect (sigs.k8s.io/gateway-api apis/v1/grpcroute_types.go, GRPCRouteSpec.Hostnames);
		// no hostname intersects every other.
		switch {
		case r.GRPC && (r.Hostname == "" || r.GRPCHostname == ""):
			bad("grpcHostname", "needs hostname and grpcHostname both set: a Gateway listener accepts only one of an HTTPRoute and a GRPCRoute whose hostnames intersect, and no hostname matches every host")
		case r.GRPC && r.Hostname == r.GRPCHostname:
			bad("grpcHostname", "must differ from hostname: a Gateway listener accepts only one of an HTTPRoute and a GRPCRoute whose hostnames intersect")
		case !r.GRPC && r.GRPCHostname != "":
			bad("grpcHostname", "is for grpc: true only")
		}
	case transform.RouteIngress, transform.RouteOpenShift:
		if r.Hostname == "" {
			bad("hostname", "is required for kind %s", r.Kind)
		}
		if len(r.ParentRefs) > 0 {
			bad("parentRefs", "are for kind HTTPRoute only")
		}
		if r.Kind == transform.RouteOpenShift && r.IngressClassName != "" {
			bad("ingressClassName", "is for kind Ingress only")
		}
		// An Ingress has no portable way to strip the prefix Spark does not serve under
		// (docs/routes.md); only a controller's annotation could, which sparkui does not write.
		if r.Kind == transform.RouteIngress && r.PathPrefix != "/" {
			bad("pathPrefix", "must be \"/\" for kind Ingress: networking.k8s.io/v1 has no controller-neutral prefix rewrite, and Spark serves its UI at the root (use a hostname per application, e.g. {name}.spark.example.com, or kind HTTPRoute)")
		}
		if r.GRPC || r.GRPCHostname != "" {
			bad("grpc", "needs kind HTTPRoute: the GRPCRoute attaches to the same Gateway parentRefs")
		}
	}
	return out
}
