package testcluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/transform"
)

// limitsApp is one Apache SparkApplication: the function gives it a UI Service, RBAC and the
// route of the config.
const limitsApp = `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata:
  name: pi
  namespace: analytics
spec:
  mainClass: org.apache.spark.examples.SparkPi
  jars: local:///opt/spark/examples/jars/spark-examples.jar
  sparkConf:
    spark.kubernetes.authenticate.driver.serviceAccountName: pi-runner
    spark.kubernetes.container.image: apache/spark:4.1.1-scala
  runtimeVersions:
    sparkVersion: 4.1.1
`

// runFunction runs the function in transform mode with the given spec (YAML under spec:).
func runFunction(t *testing.T, spec string) ([]*yaml.RNode, framework.Results) {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(limitsApp), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	fc := yaml.MustParse("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata: {name: sparkui}\nspec:\n" + spec)
	rl := &framework.ResourceList{Items: items, FunctionConfig: fc}
	if err := function.Process(rl); err != nil {
		t.Fatal(err)
	}
	return rl.Items, rl.Results
}

// TestDryRunRouteLimits: at each bound sparkui checks, the function's output is accepted by
// the real API server and CRDs (strict dry run), and one past it the function refuses the
// config (SUI014) where the server would refuse the object: the bounds are the servers', not
// guesses. The limits sparkui takes from elsewhere (the Gateway API's "IPs are not allowed", a
// DNS label's 63 characters) are shown accepted by the server, as docs/routes.md says.
func TestDryRunRouteLimits(t *testing.T) {
	c := routeCluster(t)
	dry := func(doc string) error {
		return c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(doc))
	}
	refs := func(n int) string {
		var b strings.Builder
		b.WriteString("    parentRefs:\n")
		for i := range n {
			fmt.Fprintf(&b, "    - {name: gw-%d, namespace: gateway-system}\n", i)
		}
		return b.String()
	}
	label63 := strings.Repeat("l", 63)
	histAt := "https://history.example.com/" + strings.Repeat("h", sidecar.MaxHistoryURL-len("https://history.example.com/"))
	for _, tc := range []struct {
		name, at, past, field string
	}{
		{"HTTPRoute path match value", "  route:\n    kind: HTTPRoute\n    pathPrefix: /" + strings.Repeat("p", transform.MaxHTTPRoutePath-1) + "\n" + refs(1),
			"  route:\n    kind: HTTPRoute\n    pathPrefix: /" + strings.Repeat("p", transform.MaxHTTPRoutePath) + "\n" + refs(1), "spec.route.pathPrefix"},
		{"HTTPRoute parentRefs", "  route:\n    kind: HTTPRoute\n" + refs(transform.MaxParentRefs),
			"  route:\n    kind: HTTPRoute\n" + refs(transform.MaxParentRefs+1), "spec.route.parentRefs"},
		{"Route header value", "  route:\n    kind: Route\n    hostname: h.example.com\n    pathPrefix: /" + strings.Repeat("p", transform.MaxOpenShiftHeaderValue-1) + "\n",
			"  route:\n    kind: Route\n    hostname: h.example.com\n    pathPrefix: /" + strings.Repeat("p", transform.MaxOpenShiftHeaderValue) + "\n", "spec.route.pathPrefix"},
		{"Route host label", "  route:\n    kind: Route\n    hostname: " + label63 + ".example.com\n",
			"  route:\n    kind: Route\n    hostname: " + label63 + "l.example.com\n", "spec.route.hostname"},
		{"Ingress host", "  route:\n    kind: Ingress\n    hostname: ui.example.com\n",
			"  route:\n    kind: Ingress\n    hostname: 10.0.0.1\n", "spec.route.hostname"},
		{"historyServer.url", "  historyServer:\n    url: " + histAt + "\n",
			"  historyServer:\n    url: " + histAt + "h\n", "spec.historyServer.url"},
	} {
		items, res := runFunction(t, tc.at)
		for _, r := range res {
			if r.Severity == framework.Error {
				t.Errorf("%s at the bound: %s", tc.name, r)
			}
		}
		for _, it := range items {
			if err := dry(it.MustString()); err != nil {
				t.Errorf("%s at the bound: %s %s refused: %.400v", tc.name, it.GetKind(), it.GetName(), err)
			}
		}
		_, res = runFunction(t, tc.past)
		if len(res) != 1 || res[0].Tags["rule"] != "SUI014" || res[0].Field == nil || res[0].Field.Path != tc.field {
			t.Errorf("%s past the bound: %v, want one SUI014 at %s", tc.name, res, tc.field)
		}
	}

	// The same bounds, one past, as the server sees them: each object refused, naming the field.
	httpRoute := func(hosts, path, header, parents string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: analytics}\nspec:\n  parentRefs:\n" + parents + hosts +
			"  rules:\n  - matches: [{path: {type: PathPrefix, value: " + path + "}}]\n    filters:\n    - type: RequestHeaderModifier\n      requestHeaderModifier:\n        set: [{name: X-Forwarded-Context, value: " + header + "}]\n" +
			"    backendRefs: [{name: s, port: 4040}]\n"
	}
	one := "  - {name: gw, namespace: gateway-system}\n"
	manyRefs := strings.ReplaceAll(refs(transform.MaxParentRefs+1), "    - {", "  - {")
	manyRefs = strings.TrimPrefix(manyRefs, "    parentRefs:\n")
	route := func(host, header string) string {
		return "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: r, namespace: analytics}\nspec:\n  host: " + host + "\n  path: /ui\n  to: {kind: Service, name: s}\n" +
			"  httpHeaders:\n    actions:\n      request:\n      - name: X-Forwarded-Context\n        action: {type: Set, set: {value: " + header + "}}\n"
	}
	ingress := func(host string) string {
		return "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, namespace: analytics}\nspec:\n  rules:\n  - host: " + host + "\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: s, port: {number: 4040}}}}\n"
	}
	svc := func(annotationBytes int) string {
		return "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: analytics\n  annotations:\n    sparkui.dev/history-uri: " + strings.Repeat("u", annotationBytes-len("sparkui.dev/history-uri")) + "\nspec:\n  ports: [{name: spark-ui, port: 4040}]\n"
	}
	const maxAnnotations = 256 * 1024
	for _, tc := range []struct{ name, doc, want string }{
		{"HTTPRoute path value 1025", httpRoute("", "/"+strings.Repeat("p", 1024), "/x", one), "spec.rules[0].matches[0].path.value: Too long: may not be more than 1024 bytes"},
		{"HTTPRoute header value 4097", httpRoute("", "/x", strings.Repeat("v", 4097), one), "spec.rules[0].filters[0].requestHeaderModifier.set[0].value: Too long: may not be more than 4096 bytes"},
		{"HTTPRoute 33 parentRefs", httpRoute("", "/x", "/x", manyRefs), "spec.parentRefs: Too many: 33: must have at most 32 items"},
		{"Route header value 16385", route("h.example.com", strings.Repeat("v", 16385)), "Too long: may not be more than 16384 bytes"},
		{"Route host label 64", route(label63+"l.example.com", "/ui"), "spec.host: Invalid value"},
		{"Ingress host IP", ingress("10.0.0.1"), "must be a DNS name, not an IP address"},
		{"Service annotations past 256 KiB", svc(maxAnnotations + 1), "metadata.annotations: Too long: may not be more than 262144 bytes"},
		// Accepted: sparkui's bound comes from the Gateway API's text or from DNS.
		{"HTTPRoute host IP", httpRoute("  hostnames: [10.0.0.1]\n", "/x", "/x", one), ""},
		{"HTTPRoute host label 64", httpRoute("  hostnames: ["+label63+"l.example.com]\n", "/x", "/x", one), ""},
		{"Ingress host label 64", ingress(label63 + "l.example.com"), ""},
		// At the bounds: accepted.
		{"HTTPRoute path value 1024, header 4096", httpRoute("", "/"+strings.Repeat("p", 1023), strings.Repeat("v", 4096), one), ""},
		{"Route header value 16384", route(label63+".example.com", strings.Repeat("v", 16384)), ""},
		{"Service annotations at 256 KiB", svc(maxAnnotations), ""},
	} {
		err := dry(tc.doc)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %.400v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %.400v, want a refusal containing %q", tc.name, err, tc.want)
		}
	}
}
