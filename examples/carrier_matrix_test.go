package examples_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/testkit/operatortest"
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

// matrixInput is the carrier fixture with the feature's Spark properties and host network
// setting written where the carrier keeps them.
func matrixInput(t *testing.T, mc matrixCarrier, route string, f matrixFeature) []*yaml.RNode {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(mc.file))
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(f.conf))
	for k := range f.conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		setConf(t, items, k, f.conf[k])
	}
	if f.hostNetwork != nil {
		setHostNetwork(t, items, route, *f.hostNetwork)
		if *f.hostNetwork && mc.kind == "workload" {
			provePodName(t, items)
		}
	}
	return items
}

// provePodName applies SUI022's fix to a client-mode workload put on the host network: there
// Spark's application id is no proof, so the conf names the driver Pod
// (spark.kubernetes.driver.pod.name), which the runtime matches against POD_NAME. A
// StatefulSet's Pod name is fixed (<name>-0); other workloads pass $(POD_NAME), which the
// kubelet expands from the container's downward-API env.
func provePodName(t *testing.T, items []*yaml.RNode) {
	t.Helper()
	const key = "spark.kubernetes.driver.pod.name"
	for _, it := range items {
		switch it.GetKind() {
		case "StatefulSet":
			setConf(t, items, key, it.GetName()+"-0")
		case "Deployment", "Job", "CronJob":
			setConf(t, items, key, "$(POD_NAME)")
			ctr := workloadContainer(t, it)
			env, err := ctr.Pipe(yaml.LookupCreate(yaml.SequenceNode, "env"))
			if err != nil {
				t.Fatal(err)
			}
			if e, _ := env.Pipe(yaml.MatchElement("name", "POD_NAME")); e == nil {
				mustPipe(t, env, yaml.Append(yaml.MustParse("name: POD_NAME\nvalueFrom: {fieldRef: {fieldPath: metadata.name}}\n").YNode()))
			}
		}
	}
}

// setConf sets Spark property k=v where the carrier's driver reads it: a spark-submit Pod's
// spark.properties (and, for the IP families, the driver Service Spark makes from them), an
// operator resource's sparkConf, a StatefulSet's mounted spark-defaults.conf, a workload's
// spark-submit command line (--conf, replacing any earlier setting of k).
func setConf(t *testing.T, items []*yaml.RNode, k, v string) {
	t.Helper()
	for _, it := range items {
		switch kind := it.GetKind(); {
		case kind == "ConfigMap" && it.GetDataMap()["spark.properties"] != "":
			it.SetDataMap(merged(it.GetDataMap(), map[string]string{"spark.properties": propertiesWith(it.GetDataMap()["spark.properties"], k+"=", k+"="+v)}))
		case kind == "ConfigMap" && it.GetDataMap()["spark-defaults.conf"] != "":
			it.SetDataMap(merged(it.GetDataMap(), map[string]string{"spark-defaults.conf": propertiesWith(it.GetDataMap()["spark-defaults.conf"], k+" ", k+" "+v)}))
		case kind == "Service" && strings.HasSuffix(it.GetName(), "-driver-svc"):
			switch k {
			case "spark.kubernetes.driver.service.ipFamilyPolicy":
				mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("ipFamilyPolicy", yaml.NewScalarRNode(v)))
			case "spark.kubernetes.driver.service.ipFamilies":
				mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("ipFamilies", yaml.NewListRNode(strings.Split(v, ",")...)))
			}
		case strings.HasPrefix(it.GetApiVersion(), "sparkoperator.k8s.io/") || strings.HasPrefix(it.GetApiVersion(), "spark.apache.org/") ||
			strings.HasPrefix(it.GetApiVersion(), "spark.stackable.tech/"):
			path := []string{"spec", "sparkConf"}
			if kind == "ScheduledSparkApplication" {
				path = []string{"spec", "template", "sparkConf"}
			}
			mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, path...), yaml.SetField(k, yaml.NewStringRNode(v)))
		case kind == "Deployment" || kind == "Job" || kind == "CronJob":
			ctr := workloadContainer(t, it)
			for _, list := range []string{"command", "args"} {
				l := ctr.Field(list)
				if l == nil {
					continue
				}
				var kept []string
				var toks []string
				for _, e := range l.Value.YNode().Content {
					toks = append(toks, e.Value)
				}
				for i := 0; i < len(toks); i++ {
					switch {
					case strings.HasPrefix(toks[i], "--conf="+k+"="):
					case (toks[i] == "--conf" || toks[i] == "-c") && i+1 < len(toks) && strings.HasPrefix(toks[i+1], k+"="):
						i++
					default:
						kept = append(kept, toks[i])
					}
				}
				if list == "command" {
					// spark-submit (or the script that calls it) first, its options after.
					kept = append(kept[:1:1], append([]string{"--conf=" + k + "=" + v}, kept[1:]...)...)
				}
				mustPipe(t, ctr, yaml.SetField(list, yaml.NewListRNode(kept...)))
			}
		}
	}
}

// propertiesWith is a properties text with the lines starting with prefix replaced by line.
func propertiesWith(text, prefix, line string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(append(out, line), "\n") + "\n"
}

// setHostNetwork puts the driver on the host network, or takes it off: the pod spec's
// hostNetwork (and Kubernetes' DNS policy for it), and on the kubeflow webhook injection
// spec.driver.hostNetwork, which the webhook applies (sparkpod_defaulter.go addHostNetwork).
func setHostNetwork(t *testing.T, items []*yaml.RNode, route string, on bool) {
	t.Helper()
	for _, it := range items {
		var spec []string
		switch it.GetKind() {
		case "Pod":
			spec = []string{"spec"}
		case "Deployment", "StatefulSet", "Job":
			spec = []string{"spec", "template", "spec"}
		case "CronJob":
			spec = []string{"spec", "jobTemplate", "spec", "template", "spec"}
		case "SparkConnect":
			spec = []string{"spec", "server", "template", "spec"}
		case "SparkApplication", "ScheduledSparkApplication":
			base := []string{"spec"}
			if it.GetKind() == "ScheduledSparkApplication" {
				base = []string{"spec", "template"}
			}
			if strings.HasPrefix(it.GetApiVersion(), "spark.apache.org/") {
				spec = append(base, "driverSpec", "podTemplateSpec", "spec")
			} else if strings.HasPrefix(it.GetApiVersion(), "spark.stackable.tech/") {
				spec = append(base, "driver", "podOverrides", "spec")
			} else if route == "webhook" {
				drv := append(base, "driver")
				if on {
					mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, drv...), yaml.SetField("hostNetwork", trueNode()))
				} else {
					mustPipe(t, it, yaml.LookupCreate(yaml.MappingNode, drv...), yaml.Clear("hostNetwork"))
				}
				continue
			} else {
				spec = append(base, "driver", "template", "spec")
			}
		default:
			continue
		}
		s, err := it.Pipe(yaml.LookupCreate(yaml.MappingNode, spec...))
		if err != nil {
			t.Fatal(err)
		}
		if on {
			mustPipe(t, s, yaml.SetField("hostNetwork", trueNode()))
			mustPipe(t, s, yaml.SetField("dnsPolicy", yaml.NewScalarRNode("ClusterFirstWithHostNet")))
		} else {
			mustPipe(t, s, yaml.Clear("hostNetwork"))
			mustPipe(t, s, yaml.Clear("dnsPolicy"))
		}
	}
}

func workloadContainer(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	path := []string{"spec", "template", "spec", "containers"}
	if it.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"}
	}
	cs, err := it.Pipe(yaml.Lookup(path...))
	if err != nil || cs == nil {
		t.Fatalf("%s %s: no containers: %v", it.GetKind(), it.GetName(), err)
	}
	elems, _ := cs.Elements()
	return elems[0]
}

func mustPipe(t *testing.T, n *yaml.RNode, fs ...yaml.Filter) {
	t.Helper()
	if _, err := n.Pipe(fs...); err != nil {
		t.Fatal(err)
	}
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
	_ = route
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// operatorDriverPod is the driver Pod an operator builds from a rewritten operator resource,
// as far as the API server's validation of it goes; nil for any other object. kubeflow's
// template injection and Apache: the template's metadata and spec (kubeflowTemplatePod,
// apacheTemplatePod). kubeflow's webhook injection: what the operator's mutating webhook adds to
// the Pod spark-submit makes (kubeflowWebhookPod).
func operatorDriverPod(t *testing.T, it *yaml.RNode, route string) *yaml.RNode {
	t.Helper()
	switch {
	case it.GetApiVersion() == "sparkoperator.k8s.io/v1beta2" && route == "webhook":
		return kubeflowWebhookPod(t, it)
	case it.GetApiVersion() == "sparkoperator.k8s.io/v1beta2":
		if p := kubeflowTemplatePod(t, it); p != nil {
			return p
		}
		t.Fatalf("%s %s: no driver template on the template injection", it.GetKind(), it.GetName())
	case strings.HasPrefix(it.GetApiVersion(), "spark.apache.org/") && it.GetKind() == "SparkApplication":
		return apacheTemplatePod(t, it)
	case it.GetApiVersion() == "sparkoperator.k8s.io/v1alpha1" && it.GetKind() == "SparkConnect":
		return connectServerPod(t, it)
	case it.GetApiVersion() == "spark.stackable.tech/v1alpha1" && it.GetKind() == "SparkApplication":
		return stackableDriverPod(t, it)
	}
	return nil
}

// stackableDriverPod is the driver Pod of a Stackable SparkApplication: the driver pod
// template the operator builds (stackabletech/spark-k8s-operator
// rust/operator-binary/src/spark_k8s_controller.rs pod_template: one container "spark", the
// application's ServiceAccount, its config volume) with spec.driver.podOverrides merged over
// it as k8s-openapi's DeepMerge does (operatortest.MergeOverrides), then what Spark adds to the template's
// container.
func stackableDriverPod(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	name := it.GetName()
	image := "oci.stackable.tech/sdp/spark-k8s:3.5.6-stackable0.0.0-dev"
	pod := yaml.MustParse(`apiVersion: v1
kind: Pod
metadata:
  labels: {app.kubernetes.io/name: spark-k8s, app.kubernetes.io/instance: ` + name + `, app.kubernetes.io/component: spark, prometheus.io/scrape: "true"}
spec:
  serviceAccountName: ` + name + `
  securityContext: {fsGroup: 1000}
  containers:
  - name: spark
    image: ` + image + `
    volumeMounts: [{name: config, mountPath: /stackable/spark/conf}]
  volumes:
  - name: config
    configMap: {name: ` + name + `-driver-pod-template}
`)
	if o, _ := it.Pipe(yaml.Lookup("spec", "driver", "podOverrides")); o != nil {
		operatortest.MergeOverrides(pod.YNode(), o.YNode(), "")
	}
	labels := pod.GetLabels()
	labels["spark-role"] = "driver"
	labels["spark-app-selector"] = "spark-0123456789abcdef0123456789abcdef"
	mustSet(t, pod.SetLabels(labels), pod.SetName(name+"-0123456789abcdef-driver"), pod.SetNamespace(it.GetNamespace()))
	spec, _ := pod.Pipe(yaml.Lookup("spec"))
	mustPipe(t, spec, yaml.SetField("restartPolicy", yaml.NewScalarRNode("Never")))
	completeContainers(t, spec)
	return pod
}

// connectServerPod is the server Pod kubeflow's SparkConnect controller creates
// (kubeflow/spark-operator internal/controller/sparkconnect/reconciler.go mutateServerPod):
// spec.server.template's labels, annotations and spec; a spark-kubernetes-driver container
// when there is none; in the server container (that one, else the first) the image from
// spec.image when unset, command and args replaced, TCP probes on 15002, env POD_IP and
// SPARK_NO_DAEMONIZE, the spark-conf mount, and the lifecycle replaced by its preStop hook;
// the spark-conf volume; its own labels over the template's.
func connectServerPod(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	pod := yaml.MustParse("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {}\n")
	tmpl, _ := it.Pipe(yaml.Lookup("spec", "server", "template"))
	labels := map[string]string{}
	if tmpl != nil {
		if spec := tmpl.Field("spec"); spec != nil {
			pod.SetMapField(spec.Value.Copy(), "spec")
		}
		if l, _ := tmpl.Pipe(yaml.Lookup("metadata", "labels")); l != nil {
			_ = l.VisitFields(func(n *yaml.MapNode) error {
				labels[n.Key.YNode().Value] = n.Value.YNode().Value
				return nil
			})
		}
		if a, _ := tmpl.Pipe(yaml.Lookup("metadata", "annotations")); a != nil {
			mustPipe(t, pod, yaml.LookupCreate(yaml.MappingNode, "metadata"), yaml.SetField("annotations", a.Copy()))
		}
	}
	spec, _ := pod.Pipe(yaml.Lookup("spec"))
	cs, _ := spec.Pipe(yaml.LookupCreate(yaml.SequenceNode, "containers"))
	elems, _ := cs.Elements()
	if len(elems) == 0 {
		mustPipe(t, cs, yaml.Append(yaml.MustParse("name: spark-kubernetes-driver\n").YNode()))
		elems, _ = cs.Elements()
	}
	ctr := elems[0]
	for _, c := range elems {
		if c.Field("name") != nil && c.Field("name").Value.YNode().Value == "spark-kubernetes-driver" {
			ctr = c
			break
		}
	}
	image := "apache/spark:4.0.1"
	if i, _ := it.Pipe(yaml.Lookup("spec", "image")); i != nil {
		image = i.YNode().Value
	}
	if ctr.Field("image") == nil {
		mustPipe(t, ctr, yaml.SetField("image", yaml.NewScalarRNode(image)))
	}
	server := yaml.MustParse(`command: [bash, -c]
args: ["${SPARK_HOME}/sbin/start-connect-server.sh --master k8s://https://10.0.0.1:443 --conf spark.driver.port=7078"]
startupProbe: {tcpSocket: {port: 15002}, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 30}
readinessProbe: {tcpSocket: {port: 15002}, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3}
lifecycle: {preStop: {exec: {command: [bash, -c, "${SPARK_HOME}/sbin/stop-connect-server.sh"]}}}
`)
	for _, f := range []string{"command", "args", "startupProbe", "readinessProbe", "lifecycle"} {
		if f == "startupProbe" || f == "readinessProbe" {
			if ctr.Field(f) != nil {
				continue
			}
		}
		ctr.SetMapField(server.Field(f).Value, f)
	}
	mustPipe(t, ctr, yaml.LookupCreate(yaml.SequenceNode, "env"), yaml.Append(yaml.MustParse("name: POD_IP\nvalueFrom: {fieldRef: {fieldPath: status.podIP}}\n").YNode()))
	mustPipe(t, ctr, yaml.LookupCreate(yaml.SequenceNode, "env"), yaml.Append(yaml.MustParse("name: SPARK_NO_DAEMONIZE\nvalue: \"true\"\n").YNode()))
	mustPipe(t, ctr, yaml.LookupCreate(yaml.SequenceNode, "volumeMounts"), yaml.Append(yaml.MustParse("name: spark-conf\nsubPath: executor-pod-template.yaml\nmountPath: /tmp/spark/executor-pod-template.yaml\nreadOnly: true\n").YNode()))
	mustPipe(t, spec, yaml.LookupCreate(yaml.SequenceNode, "volumes"), yaml.Append(yaml.MustParse("name: spark-conf\nconfigMap: {name: "+it.GetName()+"-conf, items: [{key: executor-pod-template.yaml, path: executor-pod-template.yaml}]}\n").YNode()))
	labels["sparkoperator.k8s.io/launched-by-spark-operator"] = "true"
	labels["sparkoperator.k8s.io/connect-name"] = it.GetName()
	labels["spark-role"] = "connect-server"
	if v, _ := it.Pipe(yaml.Lookup("spec", "sparkVersion")); v != nil {
		labels["spark-version"] = v.YNode().Value
	}
	mustSet(t, pod.SetLabels(labels), pod.SetName(it.GetName()+"-server"), pod.SetNamespace(it.GetNamespace()))
	completeContainers(t, spec)
	return pod
}

// apacheTemplatePod is the driver Pod Spark builds in the Apache operator from
// spec.driverSpec.podTemplateSpec (SparkAppResourceSpecFactory.java buildResourceSpec hands
// it to Spark's KubernetesDriverBuilder as the pod template): the template's labels and spec,
// plus the name, labels, restartPolicy and image Spark sets.
func apacheTemplatePod(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	tmpl, err := it.Pipe(yaml.Lookup("spec", "driverSpec", "podTemplateSpec"))
	if err != nil || tmpl == nil {
		t.Fatalf("%s: no podTemplateSpec: %v", it.GetName(), err)
	}
	pod := yaml.MustParse("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {}\n")
	if spec := tmpl.Field("spec"); spec != nil {
		pod.SetMapField(spec.Value.Copy(), "spec")
	}
	labels := map[string]string{}
	if l, _ := tmpl.Pipe(yaml.Lookup("metadata", "labels")); l != nil {
		_ = l.VisitFields(func(n *yaml.MapNode) error {
			labels[n.Key.YNode().Value] = n.Value.YNode().Value
			return nil
		})
	}
	labels["spark-role"] = "driver"
	labels["spark-app-selector"] = it.GetName() + "-0"
	mustSet(t, pod.SetLabels(labels), pod.SetName(it.GetName()+"-0-driver"), pod.SetNamespace(it.GetNamespace()))
	spec, _ := pod.Pipe(yaml.Lookup("spec"))
	mustPipe(t, spec, yaml.SetField("restartPolicy", yaml.NewScalarRNode("Never")))
	mustPipe(t, spec, yaml.Clear("priorityClassName"))
	completeContainers(t, spec)
	return pod
}

// kubeflowWebhookPod is the driver Pod of a kubeflow resource on the webhook injection: the Pod
// spark-submit makes (from the template when there is one, as kubeflowTemplatePod; else a
// spark-kubernetes-driver container), mutated as kubeflow's webhook does
// (kubeflow/spark-operator internal/webhook/sparkpod_defaulter.go): addVolumes adds each
// spec.volumes entry that spec.driver.volumeMounts mounts, and that mount, to the Spark
// container, and no other volume; addHostNetwork, addInitContainers (appended unless one of
// the same name and image is there), addPodLifeCycleConfig (the Spark container's lifecycle
// replaced); spec.driver.labels reach the Pod as spark.kubernetes.driver.label.*.
func kubeflowWebhookPod(t *testing.T, it *yaml.RNode) *yaml.RNode {
	t.Helper()
	pod := kubeflowTemplatePod(t, it)
	if pod == nil {
		pod = yaml.MustParse("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {restartPolicy: Never}\n")
		mustSet(t, pod.SetName(it.GetName()+"-driver"), pod.SetNamespace(it.GetNamespace()),
			pod.SetLabels(map[string]string{"spark-role": "driver", "spark-app-selector": "spark-0123456789abcdef0123456789abcdef"}))
	}
	base := []string{"spec"}
	if it.GetKind() == "ScheduledSparkApplication" {
		base = []string{"spec", "template"}
	}
	app, _ := it.Pipe(yaml.Lookup(base...))
	drv, _ := app.Pipe(yaml.Lookup("driver"))
	spec, _ := pod.Pipe(yaml.Lookup("spec"))
	// The Spark container: spark-kubernetes-driver (findContainer), made when missing.
	cs, _ := spec.Pipe(yaml.LookupCreate(yaml.SequenceNode, "containers"))
	ctr, _ := cs.Pipe(yaml.MatchElement("name", "spark-kubernetes-driver"))
	if ctr == nil {
		ctr = yaml.MustParse("name: spark-kubernetes-driver\nimage: apache/spark:3.5.5\n")
		mustPipe(t, cs, yaml.Append(ctr.YNode()))
	}
	if drv == nil {
		return pod
	}
	volumes := map[string]*yaml.RNode{}
	if vs, _ := app.Pipe(yaml.Lookup("volumes")); vs != nil {
		elems, _ := vs.Elements()
		for _, v := range elems {
			volumes[v.Field("name").Value.YNode().Value] = v
		}
	}
	added := map[string]bool{}
	if ms, _ := drv.Pipe(yaml.Lookup("volumeMounts")); ms != nil {
		elems, _ := ms.Elements()
		for _, m := range elems {
			name := m.Field("name").Value.YNode().Value
			v, ok := volumes[name]
			if !ok {
				continue
			}
			if !added[name] {
				added[name] = true
				mustPipe(t, spec, yaml.LookupCreate(yaml.SequenceNode, "volumes"), yaml.Append(v.Copy().YNode()))
			}
			mustPipe(t, ctr, yaml.LookupCreate(yaml.SequenceNode, "volumeMounts"), yaml.Append(m.Copy().YNode()))
		}
	}
	if hn, _ := drv.Pipe(yaml.Lookup("hostNetwork")); hn != nil && hn.YNode().Value == "true" {
		mustPipe(t, spec, yaml.SetField("hostNetwork", trueNode()))
		mustPipe(t, spec, yaml.SetField("dnsPolicy", yaml.NewScalarRNode("ClusterFirstWithHostNet")))
	}
	if ics, _ := drv.Pipe(yaml.Lookup("initContainers")); ics != nil {
		elems, _ := ics.Elements()
		for _, ic := range elems {
			mustPipe(t, spec, yaml.LookupCreate(yaml.SequenceNode, "initContainers"), yaml.Append(ic.Copy().YNode()))
		}
	}
	if lc := drv.Field("lifecycle"); lc != nil {
		ctr.SetMapField(lc.Value.Copy(), "lifecycle")
	}
	if l, _ := drv.Pipe(yaml.Lookup("labels")); l != nil {
		labels := pod.GetLabels()
		_ = l.VisitFields(func(n *yaml.MapNode) error {
			labels[n.Key.YNode().Value] = n.Value.YNode().Value
			return nil
		})
		mustSet(t, pod.SetLabels(labels))
	}
	return pod
}

// completeContainers gives each container the image Spark would (the template's containers
// may have none: Spark sets the driver's from spark.kubernetes.container.image).
func completeContainers(t *testing.T, spec *yaml.RNode) {
	t.Helper()
	cs, _ := spec.Pipe(yaml.Lookup("containers"))
	if cs == nil {
		return
	}
	elems, _ := cs.Elements()
	for _, c := range elems {
		if c.Field("image") == nil {
			mustPipe(t, c, yaml.SetField("image", yaml.NewScalarRNode("apache/spark:4.0.1")))
		}
	}
}

// trueNode is a YAML boolean true (a plain scalar would be written as the string "true").
func trueNode() *yaml.RNode {
	return yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: "true"})
}

func mustSet(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
