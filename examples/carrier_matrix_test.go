package examples_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// The carrier matrix: every functionConfig feature against every carrier kind, in one table.
// Each case runs the function (transform) on a carrier fixture shaped on the operators' own
// examples and on what spark-submit writes (examples/spark-submit is
// shared/reference/spark-submit-port0.yaml; testdata/assets/carriers/README.md names the rest),
// then asserts that
//   - validate mode on the output finds exactly the findings the carrier and the feature
//     explain (matrixExplained), and transform mode none more;
//   - a server-side dry run with strict field validation, on a dual-stack control plane with
//     the kubeflow and Apache CRDs installed, accepts every object of the output, and the
//     driver Pod that the operator builds from an operator resource (the CRDs take anything
//     in kubeflow's driver.template, and no schema checks that a mount has its volume).

// matrixCarrier is one carrier fixture.
type matrixCarrier struct {
	name, file string
	kind       string // Pod, kubeflow, sparkconnect, apache, stackable, workload
	// hostNetwork: the fixture's driver is on the host network.
	hostNetwork bool
}

var matrixCarriers = []matrixCarrier{
	{"spark-submit-pod", "spark-submit/manifests.yaml", "Pod", true},
	{"kubeflow-sparkapplication", "../testdata/assets/carriers/kubeflow-sparkapplication.yaml", "kubeflow", false},
	{"kubeflow-scheduled", "../testdata/assets/carriers/kubeflow-scheduled.yaml", "kubeflow", false},
	{"kubeflow-sparkconnect", "../testdata/assets/carriers/kubeflow-sparkconnect.yaml", "sparkconnect", false},
	{"apache-v1", "../testdata/assets/carriers/apache-v1.yaml", "apache", false},
	{"apache-v1-template", "../testdata/assets/carriers/apache-v1-template.yaml", "apache", false},
	{"apache-v1beta1", "../testdata/assets/carriers/apache-v1beta1.yaml", "apache", false},
	{"stackable-sparkapplication", "../testdata/assets/carriers/stackable-sparkapplication.yaml", "stackable", false},
	{"deployment", "../testdata/assets/carriers/connect-deployment.yaml", "workload", true},
	{"statefulset", "../testdata/assets/carriers/notebook-statefulset.yaml", "workload", false},
	{"job", "../testdata/assets/carriers/driver-job.yaml", "workload", false},
	{"cronjob", "../testdata/assets/carriers/driver-cronjob.yaml", "workload", false},
}

// matrixFeature is one functionConfig feature: ConfigMap-form keys, and what it needs of the
// application (Spark properties, the driver on the host network or not).
type matrixFeature struct {
	name        string
	config      map[string]string
	conf        map[string]string
	hostNetwork *bool
}

func ptr[T any](v T) *T { return &v }

var (
	tlsConf  = map[string]string{"spark.ssl.ui.enabled": "true"}
	dualConf = map[string]string{"spark.kubernetes.driver.service.ipFamilyPolicy": "RequireDualStack", "spark.kubernetes.driver.service.ipFamilies": "IPv4,IPv6"}
)

var matrixFeatures = []matrixFeature{
	{name: "defaults"},
	{name: "auth-bearer", config: map[string]string{"authBearerSecret": "spark-ui-jws/token"}},
	{name: "auth-header", config: map[string]string{"authHeaderSecret": "ui-cookie/header"}},
	{name: "ClusterIP-uri-annotation", config: map[string]string{"externalURI": "annotation"}},
	{name: "NodePort", config: map[string]string{"serviceType": "NodePort"}},
	{name: "NodePort-uri-annotation", config: map[string]string{"serviceType": "NodePort", "externalURI": "annotation"}},
	{name: "NodePort-uri-nodePort", config: map[string]string{"serviceType": "NodePort", "externalURI": "nodePort"}},
	{name: "LoadBalancer", config: map[string]string{"serviceType": "LoadBalancer"}},
	{name: "LoadBalancer-uri-annotation", config: map[string]string{"serviceType": "LoadBalancer", "externalURI": "annotation"}},
	{name: "LoadBalancer-uri-nodePort", config: map[string]string{"serviceType": "LoadBalancer", "externalURI": "nodePort"}},
	{name: "LoadBalancer-uri-loadBalancer", config: map[string]string{"serviceType": "LoadBalancer", "externalURI": "loadBalancer"}},
	{name: "tls", conf: tlsConf},
	{name: "hostNetwork", hostNetwork: ptr(true)},
	{name: "podNetwork", hostNetwork: ptr(false)},
	{name: "single-stack", conf: map[string]string{"spark.kubernetes.driver.service.ipFamilyPolicy": "SingleStack", "spark.kubernetes.driver.service.ipFamilies": "IPv4"}},
	{name: "dual-stack", conf: dualConf},
	// Routes (docs/routes.md): every kind, under a prefix where the kind takes one.
	{name: "route-httproute", config: map[string]string{"routeKind": "HTTPRoute", "routeParentRef": "gateway-system/shared/https",
		"routeHostname": "spark.example.com", "routePathPrefix": "/spark/{namespace}/{name}"}},
	{name: "route-grpc", config: map[string]string{"routeKind": "HTTPRoute", "routeParentRef": "gateway-system/shared",
		"routeHostname": "{name}-ui.example.com", "routeGRPC": "true", "routeGRPCHostname": "{name}.example.com"}},
	{name: "route-ingress", config: map[string]string{"routeKind": "Ingress", "routeHostname": "{name}.spark.example.com",
		"routeIngressClass": "shared", "routeTLSSecret": "spark-wildcard-tls"}},
	{name: "route-openshift", config: map[string]string{"routeKind": "Route", "routeHostname": "spark.apps.example.com",
		"routePathPrefix": "/ui/{namespace}/{name}", "routeTLSSecret": "spark-apps-tls"}},
	{name: "everything", hostNetwork: ptr(true),
		config: map[string]string{"authBearerSecret": "spark-ui-jws/token", "serviceType": "LoadBalancer", "externalURI": "loadBalancer"},
		conf:   merged(tlsConf, dualConf)},
}

func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestCarrierMatrix(t *testing.T) {
	c := testcluster.Shared(t, dualStack(t))
	ctx := context.Background()
	dry := map[string]error{} // document → the API server's answer: the cases share most objects
	dryRunDoc := func(doc string) error {
		if err, ok := dry[doc]; ok {
			return err
		}
		err := c.DryRunCreateYAML(ctx, []byte(doc))
		dry[doc] = err
		return err
	}
	start := time.Now()
	cases := 0
	for _, mc := range matrixCarriers {
		routes := []string{"template"}
		if mc.kind == "kubeflow" {
			routes = append(routes, "webhook")
		}
		for _, route := range routes {
			for _, f := range matrixFeatures {
				cases++
				t.Run(mc.name+"/"+route+"/"+f.name, func(t *testing.T) {
					items := matrixInput(t, mc, route, f)
					cfg := map[string]string{"kubeflowInjection": route}
					for k, v := range f.config {
						cfg[k] = v
					}
					out, transformResults := matrixProcess(t, items, cfg)
					cfg["mode"] = "validate"
					_, validateResults := matrixProcess(t, out, cfg)
					want := matrixExplained(mc, route, f)
					if got := findingSet(validateResults); got != want {
						t.Errorf("validate on the output finds:\n%s\nthe carrier and the feature explain:\n%s\nresults:\n%s", got, want, resultText(validateResults))
					}
					if got := findingSet(transformResults); got != want {
						t.Errorf("transform reports:\n%s\nthe carrier and the feature explain:\n%s\nresults:\n%s", got, want, resultText(transformResults))
					}
					for _, it := range out {
						docs := []*yaml.RNode{it}
						if pod := operatorDriverPod(t, it, route); pod != nil {
							docs = append(docs, pod)
						}
						for i, d := range docs {
							s, err := d.String()
							if err != nil {
								t.Fatal(err)
							}
							if err := dryRunDoc(s); err != nil {
								what := it.GetKind() + " " + it.GetName()
								if i > 0 {
									what = "the driver Pod the operator builds from " + what
								}
								t.Errorf("%s is refused: %v\n%s", what, err, s)
							}
						}
					}
				})
			}
		}
	}
	t.Logf("%d cases, %d distinct objects dry-run, in %s", cases, len(dry), time.Since(start).Round(time.Millisecond))
}

// matrixProcess runs the function on copies of items with a ConfigMap functionConfig.
func matrixProcess(t *testing.T, items []*yaml.RNode, cfg map[string]string) ([]*yaml.RNode, framework.Results) {
	t.Helper()
	fc := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\n")
	fc.SetDataMap(cfg)
	rl := &framework.ResourceList{FunctionConfig: fc}
	for _, it := range items {
		rl.Items = append(rl.Items, it.Copy())
	}
	if err := function.Process(rl); err != nil {
		t.Fatal(err)
	}
	return rl.Items, rl.Results
}

// findingSet is the results' rules and severities, one per line, sorted.
func findingSet(rs framework.Results) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %s", r.Tags["rule"], r.Severity))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func resultText(rs framework.Results) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Message)
	}
	return strings.Join(out, "\n")
}

// matrixExplained is what validation must find on the output, and why: the findings a
// carrier fixture has whatever sparkui is configured with, and those the host network brings.
// No feature may add any other (an error least of all).
func matrixExplained(mc matrixCarrier, route string, f matrixFeature) string {
	hostNetwork := mc.hostNetwork
	if f.hostNetwork != nil {
		hostNetwork = *f.hostNetwork
	}
	var out []string
	switch mc.name {
	case "spark-submit-pod":
		if hostNetwork {
			// The driver declares driver-rpc-port and blockmanager: hostPorts there.
			out = append(out, "SUI011 warning")
		}
	case "kubeflow-sparkapplication", "kubeflow-scheduled":
		// The operator's own <app>-ui-svc targets the declared port, whatever the route.
		out = append(out, "SUI032 warning")
	case "kubeflow-sparkconnect":
		// Client mode; the operator's server Service has web-ui 4040 → 4040. Under hostNetwork
		// the operator's spark.kubernetes.driver.pod.name proves the UI (no SUI022).
		out = append(out, "SUI013 info", "SUI032 warning")
	case "statefulset":
		out = append(out, "SUI013 info") // client mode
		if hostNetwork {
			out = append(out, "SUI011 warning") // the notebook declares its port 8888
		}
	case "deployment", "job":
		out = append(out, "SUI013 info") // client mode / driver-only
	case "cronjob":
		// Driver-only; no ServiceAccount; concurrencyPolicy Allow lets two runs share the Service.
		out = append(out, "SUI013 info", "SUI016 warning", "SUI036 warning")
	}
	// A workload's conf is not sparkui's to write: a route under a prefix asks for the
	// proxy settings to be added by hand.
	if p := f.config["routePathPrefix"]; p != "" && p != "/" && mc.kind == "workload" {
		out = append(out, "SUI049 warning")
	}
	// A NodePort or LoadBalancer UI Service, or a route, publishes the UI; no feature here
	// turns the kill links off or puts a filter in front (SUI064, docs/security.md).
	if t := f.config["serviceType"]; t == "NodePort" || t == "LoadBalancer" || f.config["routeKind"] != "" {
		out = append(out, "SUI064 warning")
	}
	_ = route
	sort.Strings(out)
	return strings.Join(out, "\n")
}
