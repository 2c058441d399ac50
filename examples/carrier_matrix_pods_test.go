package examples_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/testkit/operatortest"
)

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
