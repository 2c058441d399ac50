package validate

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

// TestSUI054Overlap: which pairs of route objects of two applications take the same requests:
// the same Gateway (a parentRef without sectionName reaches every listener, one without
// namespace the route's own), intersecting hosts (none matches every host), the same path
// prefix; a GRPCRoute takes every request of its host; Ingresses of one class; Routes.
func TestSUI054Overlap(t *testing.T) {
	http := func(ns, parent, host, path string) string {
		h := ""
		if host != "" {
			h = "\n  hostnames: [" + host + "]"
		}
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: " + ns + "}\nspec:\n  parentRefs: [" + parent + "]" + h +
			"\n  rules:\n  - matches: [{path: {type: PathPrefix, value: " + path + "}}]\n"
	}
	grpc := func(host string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {name: g, namespace: a}\nspec:\n  parentRefs: [{name: gw, namespace: gs}]\n  hostnames: [" + host + "]\n"
	}
	ingress := func(class, host string) string {
		return "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, namespace: a}\nspec:\n  ingressClassName: " + class + "\n  rules:\n  - host: " + host + "\n    http: {paths: [{path: /, pathType: Prefix}]}\n"
	}
	route := func(host, path string) string {
		return "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: o, namespace: a}\nspec: {host: " + host + ", path: " + path + "}\n"
	}
	routeIn := func(ns, host, path string) string {
		return strings.Replace(route(host, path), "namespace: a", "namespace: "+ns, 1)
	}
	const gw = "{name: gw, namespace: gs}"
	for _, tc := range []struct {
		name          string
		x, y          string
		want, claimed bool
	}{
		{"same prefix, no hosts, one Gateway", http("a", gw, "", "/spark/etl"), http("b", gw, "", "/spark/etl"), true, false},
		{"same prefix, one host each, same host", http("a", gw, "h.example.com", "/s"), http("b", gw, "h.example.com", "/s"), true, false},
		{"same prefix, a host and none", http("a", gw, "h.example.com", "/s"), http("b", gw, "", "/s"), true, false},
		{"same prefix, two hosts", http("a", gw, "h.example.com", "/s"), http("b", gw, "k.example.com", "/s"), false, false},
		{"other prefixes", http("a", gw, "", "/spark/a/etl"), http("b", gw, "", "/spark/b/etl"), false, false},
		{"nested prefixes", http("a", gw, "", "/spark"), http("b", gw, "", "/spark/etl"), false, false},
		{"two Gateways", http("a", gw, "", "/s"), http("b", "{name: other, namespace: gs}", "", "/s"), false, false},
		{"Gateway of each route's own namespace", http("a", "{name: gw}", "", "/s"), http("b", "{name: gw}", "", "/s"), false, false},
		{"one listener and the whole Gateway", http("a", "{name: gw, namespace: gs, sectionName: https}", "", "/s"), http("b", gw, "", "/s"), true, false},
		{"two listeners", http("a", "{name: gw, namespace: gs, sectionName: https}", "", "/s"), http("b", "{name: gw, namespace: gs, sectionName: http}", "", "/s"), false, false},
		{"GRPCRoute and HTTPRoute on its host", grpc("c.example.com"), http("b", gw, "c.example.com", "/s"), true, false},
		{"GRPCRoute and hostless HTTPRoute", grpc("c.example.com"), http("b", gw, "", "/s"), true, false},
		{"GRPCRoutes on two hosts", grpc("c.example.com"), grpc("d.example.com"), false, false},
		{"GRPCRoutes on one host", grpc("c.example.com"), grpc("c.example.com"), true, false},
		{"Ingresses, one class, one host", ingress("shared", "h.example.com"), ingress("shared", "h.example.com"), true, false},
		{"Ingresses, two classes", ingress("shared", "h.example.com"), ingress("internal", "h.example.com"), false, false},
		{"Ingress and HTTPRoute", ingress("shared", "h.example.com"), http("b", gw, "h.example.com", "/"), false, false},
		{"Routes, same host and path", route("h.example.com", "/s"), route("h.example.com", "/s"), true, false},
		{"Routes, same host, other paths", route("h.example.com", "/s"), route("h.example.com", "/t"), false, false},
		{"Routes, same host, two namespaces", routeIn("a", "h.example.com", "/ui/a/x"), routeIn("b", "h.example.com", "/ui/b/x"), false, true},
	} {
		ax, ay := &app.App{}, &app.App{}
		mx := routeMatches(ax, yaml.MustParse(tc.x).GetKind(), yaml.MustParse(tc.x))
		my := routeMatches(ay, yaml.MustParse(tc.y).GetKind(), yaml.MustParse(tc.y))
		got, claimed := false, false
		for _, x := range mx {
			for _, y := range my {
				got = got || x.family == y.family && overlaps(x, y)
				claimed = claimed || hostClaimed(x, y)
			}
		}
		if got != tc.want || claimed != tc.claimed {
			t.Errorf("%s: overlap %v, host claimed %v; want %v, %v", tc.name, got, claimed, tc.want, tc.claimed)
		}
	}
}
