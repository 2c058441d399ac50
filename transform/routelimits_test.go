package transform

import (
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/app"
)

// TestResolveRouteLimits: what only an application's own name or namespace makes too long or
// an IP is that application's problem (SUI053), found on the expansion; the same template with
// a short name resolves.
func TestResolveRouteLimits(t *testing.T) {
	long := strings.Repeat("n", 200)
	lit := "/" + strings.Repeat("p", 820)
	for _, tc := range []struct {
		o          RouteOptions
		name, want string
	}{
		{RouteOptions{Kind: RouteIngress, Hostname: "{name}.spark.example.com", PathPrefix: "/"}, "etl", ""},
		{RouteOptions{Kind: RouteIngress, Hostname: "{name}.spark.example.com", PathPrefix: "/"}, strings.Repeat("e", 64),
			`spec.route.hostname expands to "` + strings.Repeat("e", 64) + `.spark.example.com", which has a DNS label of 64 characters: must be no more than 63 characters (RFC 1035: no DNS name holds a longer label)`},
		{RouteOptions{Kind: RouteHTTPRoute, Hostname: "ui.example.com", GRPC: true, GRPCHostname: "{name}", PathPrefix: "/"}, "fd00.1",
			""},
		{RouteOptions{Kind: RouteHTTPRoute, Hostname: "ui.example.com", GRPC: true, GRPCHostname: "{name}", PathPrefix: "/"}, "10.0.0.9",
			`spec.route.grpcHostname expands to "10.0.0.9", which is an IP address: a route's host must be a DNS name (Gateway API: "IPs are not allowed"; the API server refuses an Ingress host that is an IP)`},
		{RouteOptions{Kind: RouteHTTPRoute, PathPrefix: lit + "/{name}"}, "etl", ""},
		{RouteOptions{Kind: RouteHTTPRoute, PathPrefix: lit + "/{name}"}, long, ""}, // 1022 characters
		{RouteOptions{Kind: RouteHTTPRoute, PathPrefix: lit + "/{namespace}/{name}"}, long,
			`spec.route.pathPrefix expands to "` + lit + "/analytics/" + long + `", which is 1032 characters long: an HTTPRoute path match value has at most 1024 (Gateway API HTTPPathMatch.Value)`},
		{RouteOptions{Kind: RouteOpenShift, Hostname: "h.example.com", PathPrefix: "/" + strings.Repeat("p", 16300) + "/{name}"}, long,
			`spec.route.pathPrefix expands to "/` + strings.Repeat("p", 16300) + "/" + long + `", which is 16502 characters long: the X-Forwarded-Context header value the Route sets (spec.httpHeaders) has at most 16384`},
	} {
		a := &app.App{Carrier: &app.Carrier{Namespace: "analytics", Name: tc.name}}
		if _, got := resolveRoute(a, tc.o); got != tc.want {
			t.Errorf("%+v for %.20s:\n got %.300s\nwant %.300s", tc.o.Kind, tc.name, got, tc.want)
		}
	}
}
