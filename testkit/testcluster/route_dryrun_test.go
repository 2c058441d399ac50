package testcluster_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"

	// The Gateway API CRDs are read from this module's directory (config/crd/standard): the
	// import keeps the module, at the version go.mod pins, in the module graph.
	_ "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

func gatewayCRDs(t *testing.T) []string {
	t.Helper()
	paths, err := testcluster.GatewayAPICRDs()
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// routeCluster has the Gateway API route CRDs, OpenShift's Route CRD and the operators'
// CRDs, and dual-stack Service ranges (the kubeflow fixture's UI Service is IPv6-first).
func routeCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	paths := append(gatewayCRDs(t), "../../testdata/assets/crds-openshift", "../../testdata/assets/crds")
	return testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: paths,
		APIServerArgs: map[string][]string{"service-cluster-ip-range": {"10.0.0.0/24,fd00:10:96::/112"}}})
}

// TestDryRunRouteGoldens submits every item of every route golden's output (testdata/route-*/
// expected.yaml: the route objects, the UI Services with their spark-connect port and route
// annotations, the carriers with the proxy conf, RBAC, ConfigMaps) to a server-side dry run
// with strict field validation, against the real CRDs of Gateway API v1 (HTTPRoute,
// GRPCRoute), OpenShift's route.openshift.io/v1 and the operators. Every kind of route must
// have been checked at least once.
func TestDryRunRouteGoldens(t *testing.T) {
	c := routeCluster(t)
	files, err := filepath.Glob("../../testdata/route-*/expected.yaml")
	if err != nil || len(files) < 7 {
		t.Fatalf("route goldens: %v, %v", files, err)
	}
	seen := map[string]int{}
	for _, f := range files {
		items, err := (&kio.ByteReader{Reader: bytes.NewReader(mustRead(t, f)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, it := range items {
			kind := it.GetKind()
			seen[kind]++
			if err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(it.MustString())); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(filepath.Dir(f)), kind, it.GetName(), err)
			}
		}
	}
	for _, k := range []string{"HTTPRoute", "GRPCRoute", "Ingress", "Route"} {
		if seen[k] == 0 {
			t.Errorf("no %s in the route goldens", k)
		}
	}
	t.Logf("dry-run objects by kind: %v", seen)
}

// TestDryRunRouteSchemasEnforced: the same cluster refuses route objects its CRDs forbid, so
// the acceptance above is the schemas' and not a permissive server's.
func TestDryRunRouteSchemasEnforced(t *testing.T) {
	c := routeCluster(t)
	for _, tc := range []struct{ name, doc, want string }{
		{"HTTPRoute path with //", `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad, namespace: analytics}
spec:
  parentRefs: [{name: shared}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a//b}}]
    backendRefs: [{name: s, port: 4040}]
`, "must not contain '//'"},
		{"HTTPRoute unknown field", `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad, namespace: analytics}
spec:
  parentRefs: [{name: shared}]
  rules:
  - backendRefs: [{name: s, port: 4040, weigth: 1}]
`, "unknown field"},
		{"GRPCRoute backend without port", `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: bad, namespace: analytics}
spec:
  rules:
  - backendRefs: [{name: s}]
`, "Must have port for Service reference"},
		{"Route with passthrough and header actions", `apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: bad, namespace: analytics}
spec:
  host: h.example.com
  to: {kind: Service, name: s}
  tls: {termination: passthrough, insecureEdgeTerminationPolicy: Allow}
`, "cannot have both spec.tls.termination: passthrough and spec.tls.insecureEdgeTerminationPolicy: Allow"},
	} {
		err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(tc.doc))
		if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal containing %q", tc.name, err, tc.want)
		}
	}
}
