package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/transform"
)

const typedHead = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nspec:\n  route:\n"

// TestUIRouteConfig: both forms give the same spec.route; defaults are kind none and prefix
// "/".
func TestUIRouteConfig(t *testing.T) {
	want := transform.RouteOptions{Kind: transform.RouteHTTPRoute, Hostname: "spark.example.com", PathPrefix: "/spark/{namespace}/{name}",
		ParentRefs: []transform.ParentRef{{Name: "shared", Namespace: "gateway-system", SectionName: "https"}}, GRPC: true, GRPCHostname: "connect.example.com"}
	for _, fc := range []string{
		typedHead + "    kind: HTTPRoute\n    hostname: spark.example.com\n    pathPrefix: /spark/{namespace}/{name}\n    grpc: true\n    grpcHostname: connect.example.com\n    parentRefs:\n    - {name: shared, namespace: gateway-system, sectionName: https}\n",
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  routeKind: HTTPRoute\n  routeHostname: spark.example.com\n  routePathPrefix: /spark/{namespace}/{name}\n  routeGRPC: \"true\"\n  routeGRPCHostname: connect.example.com\n  routeParentRef: gateway-system/shared/https\n",
	} {
		cfg, res := LoadConfig(yaml.MustParse(fc))
		if len(res) > 0 {
			t.Fatalf("%s: %v", fc, res)
		}
		if d := cmp.Diff(want, cfg.Transform.Route); d != "" {
			t.Errorf("%s: (-want +got)\n%s", fc, d)
		}
	}
	cfg, _ := LoadConfig(nil)
	if cfg.Transform.Route.Kind != transform.RouteNone {
		t.Errorf("default kind %q", cfg.Transform.Route.Kind)
	}
}

// TestUIRouteConfigErrors: each bad value is one SUI014 result at the field as the user wrote it.
func TestUIRouteConfigErrors(t *testing.T) {
	for _, tc := range []struct{ fc, field, msg string }{
		{typedHead + "    kind: Gateway\n", "spec.route.kind", `value must be one of "none", "HTTPRoute", "Ingress", "Route"`},
		{typedHead + "    kind: Ingress\n    hostname: Spark_UI.example.com\n", "spec.route.hostname", `"Spark_UI.example.com" is not a DNS name (DNS-1123 subdomain): a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{typedHead + "    kind: Ingress\n", "spec.route.hostname", "is required for kind Ingress"},
		{typedHead + "    kind: Route\n", "spec.route.hostname", "is required for kind Route"},
		{typedHead + "    kind: HTTPRoute\n", "spec.route.parentRefs", "an HTTPRoute needs the Gateway it attaches to"},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    pathPrefix: spark\n", "spec.route.pathPrefix", `"spark" is not an absolute path (it must start with /)`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    pathPrefix: /spark/../x\n", "spec.route.pathPrefix", `"/spark/../x" has a .. segment`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    pathPrefix: /spark/{app}\n", "spec.route.pathPrefix", `"/spark/{app}" has the placeholder {app}: only {namespace} and {name} are known`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    pathPrefix: /spark/\n", "spec.route.pathPrefix", `"/spark/" ends with /: Spark's links would start with // (write it without the trailing slash)`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    pathPrefix: /spark x\n", "spec.route.pathPrefix", `"/spark x" has the character ' ', which a path prefix match does not accept`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: Gw}]\n", "spec.route.parentRefs[0].name", `"Gw" is not a Gateway name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    tls: {secretName: c}\n", "spec.route.tls.secretName", "an HTTPRoute's TLS is set on its Gateway's listener, not on the route"},
		{typedHead + "    kind: Ingress\n    hostname: h.example.com\n    pathPrefix: /spark\n", "spec.route.pathPrefix", `must be "/" for kind Ingress: networking.k8s.io/v1 has no controller-neutral prefix rewrite, and Spark serves its UI at the root (use a hostname per application, e.g. {name}.spark.example.com, or kind HTTPRoute)`},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    hostname: h.example.com\n    grpc: true\n", "spec.route.grpcHostname", "needs hostname and grpcHostname both set: a Gateway listener accepts only one of an HTTPRoute and a GRPCRoute whose hostnames intersect, and no hostname matches every host"},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{name: gw}]\n    hostname: h.example.com\n    grpc: true\n    grpcHostname: h.example.com\n", "spec.route.grpcHostname", "must differ from hostname: a Gateway listener accepts only one of an HTTPRoute and a GRPCRoute whose hostnames intersect"},
		{typedHead + "    kind: Route\n    hostname: h.example.com\n    grpc: true\n", "spec.route.grpc", "needs kind HTTPRoute: the GRPCRoute attaches to the same Gateway parentRefs"},
		{typedHead + "    kind: HTTPRoute\n    parentRefs: [{namespace: x}]\n", "spec.route.parentRefs[0]", "missing properties: 'name'"},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  routeKind: HTTPRoute\n  routeParentRef: a//b\n", "data.routeParentRef", `"a//b" is not [<namespace>/]<name>[/<sectionName>]`},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  routeKind: HTTPRoute\n  routeParentRef: ns/gw\n  routePathPrefix: /x/\n", "data.routePathPrefix", `"/x/" ends with /: Spark's links would start with // (write it without the trailing slash)`},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  routeKind: HTTPRoute\n  routeParentRef: ns/Gw\n", "data.routeParentRef", `"Gw" is not a Gateway name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  routeKind: Route\n  routeHostname: h.example.com\n  routeGRPC: yes\n", "data.routeGRPC", `"yes" is not true or false`},
	} {
		_, res := LoadConfig(yaml.MustParse(tc.fc))
		if len(res) != 1 || res[0].Field == nil || res[0].Field.Path != tc.field || res[0].Tags["rule"] != "SUI014" || res[0].Message != "[SUI014] invalid functionConfig: "+tc.field+": "+tc.msg {
			t.Errorf("%q:\n got %v\nwant one SUI014 at %s: %s", tc.fc, res, tc.field, tc.msg)
		}
	}
}
