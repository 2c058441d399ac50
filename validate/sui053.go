package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI053: the route asked for cannot be written for an application.
var SUI053 = Rule{
	ID:       "SUI053",
	Severity: framework.Error,
	Title:    "sparkui cannot write the route for an application",
	Name:     "RouteNotWritable",
	Catches: "In transform mode, an application whose route (spec.route) sparkui cannot write: a {namespace} placeholder on an object without a namespace, " +
		"a hostname or grpcHostname whose expansion is no DNS name, an IP address or has a label over 63 characters, a pathPrefix whose expansion is longer than the route kind " +
		"takes (1,024 characters for an HTTPRoute's path match, 16,384 for a Route's X-Forwarded-Context header; docs/routes.md#limits), " +
		"or a route object of the input that is not sparkui's but has the name sparkui's would have. What breaks for every application is SUI014 on the functionConfig instead.",
	Why: "Written anyway, the route would be refused by the API server, or applied it would replace (or be replaced by) the other object: the link would lead elsewhere. " +
		"sparkui writes no route for that application and says why; the rest of its output is written.",
	Fix:      "Give the object a namespace (or drop {namespace} from the template), use templates whose expansion for this application is a DNS name and a prefix within the bound (a shorter name, or {name} out of the hostname), or rename the other route (or label it app.kubernetes.io/managed-by: sparkui and the application's identity label to let sparkui manage it).",
	RaisedBy: "transform/route.go",
	Fixtures: "[`testdata/route-no-namespace`](../testdata/route-no-namespace/input.yaml), [`testdata/route-expand-ip`](../testdata/route-expand-ip/input.yaml), [`testdata/route-expand-long-label`](../testdata/route-expand-long-label/input.yaml) and [`testdata/route-name-collision`](../testdata/route-name-collision/input.yaml) (the golden tests).",
	Failing: `metadata: {name: etl}            # no namespace
# functionConfig: route.pathPrefix: /spark/{namespace}/{name}   # SUI053
`,
	Passing: `metadata: {name: etl, namespace: analytics}
`,
}
