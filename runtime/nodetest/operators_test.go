package nodetest

// The driver Pods the Spark operators other than kubeflow's build from the function's output,
// for the node (the kubeflow rows run the real operator: carriers_kubeflow_test.go): no
// operator runs here, so the test builds what it would create — Spark's own driver Pod (with
// its spark.properties ConfigMap, which the stand-in UI reads as Spark does) from the
// operator's submission — and creates it. The operators' behaviour is documented, with the
// source files, in docs/operators.md; runtime/blackbox/carriers_test.go builds the same Pods
// for the control plane without a kubelet (without Spark's conf volume and env, which no
// process read there).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/testkit/operatortest"
)

// submission is testkit/operatortest's Submission, shared with the stand-in spark-submit
// (testkit/kubeflowtest/sparksubmit) that the real kubeflow controller runs.
type submission = operatortest.Submission

// sparkDriver is operatortest.SparkDriver (Spark's driver Pod and conf ConfigMap).
func sparkDriver(t *testing.T, s submission) (*corev1.Pod, *corev1.ConfigMap) {
	t.Helper()
	pod, cm, err := operatortest.SparkDriver(s)
	if err != nil {
		t.Fatal(err)
	}
	return pod, cm
}

// apacheDriver builds the driver Pod of an Apache spark-kubernetes-operator (1.0) application
// (docs/operators.md "Apache spark-kubernetes-operator"; apache/spark-kubernetes-operator
// spark-submission-worker/src/main/java/org/apache/spark/k8s/operator/SparkAppSubmissionWorker.java:
// buildDriverConf takes spec.sparkConf, then the operator's overrides, and spark.app.id from
// generateSparkAppId; buildResourceSpec runs Spark's KubernetesDriverBuilder.buildFromFeatures;
// spark-operator/src/main/java/org/apache/spark/k8s/operator/reconciler/SparkAppResourceSpecFactory.java
// writes spec.driverSpec.podTemplateSpec as the driver's template file among the overrides). The run is <name>-<attempt> (attempt 0 first), its Pod <run>-driver; the
// Spark container the one podTemplateContainerName names; the labels spark.operator/name and
// spark.operator/spark-app-name; its SecurityContextDecorator sets
// allowPrivilegeEscalation=false on every container that leaves it unset.
func apacheDriver(t *testing.T, app *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap) {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(app.Object, "spec")
	conf, _, _ := unstructured.NestedStringMap(spec, "sparkConf")
	tmplMap, _, _ := unstructured.NestedMap(spec, "driverSpec", "podTemplateSpec")
	tmpl := &corev1.PodTemplateSpec{}
	fromMap(t, tmplMap, tmpl)
	appID := app.GetName() + "-0"
	s := submission{
		Template: tmpl, ContainerName: conf["spark.kubernetes.driver.podTemplateContainerName"],
		Namespace: app.GetNamespace(), PodName: appID + "-driver", AppID: appID, AppName: app.GetName(),
		SparkVersion: strField(spec, "runtimeVersions", "sparkVersion"), Image: conf["spark.kubernetes.container.image"],
		ServiceAccount: conf["spark.kubernetes.authenticate.driver.serviceAccountName"], Conf: map[string]string{},
		Cores: 1, MemoryMiB: 1024, MainClass: strField(spec, "mainClass"), MainResource: strField(spec, "jars"),
	}
	s.Args, _, _ = unstructured.NestedStringSlice(spec, "driverArgs")
	for k, v := range conf {
		s.Conf[k] = v
	}
	s.Conf["spark.kubernetes.driver.label.spark.operator/name"] = "spark-kubernetes-operator"
	s.Conf["spark.kubernetes.driver.label.spark.operator/spark-app-name"] = app.GetName()
	pod, cm := sparkDriver(t, s)
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].SecurityContext == nil {
				cs[i].SecurityContext = &corev1.SecurityContext{}
			}
			if cs[i].SecurityContext.AllowPrivilegeEscalation == nil {
				cs[i].SecurityContext.AllowPrivilegeEscalation = ptr.To(false)
			}
		}
	}
	return pod, cm
}

func strField(m map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(m, path...)
	return s
}

// fromMap converts an unstructured value (JSON-compatible) into out, a typed API value.
func fromMap(t *testing.T, in any, out any) {
	t.Helper()
	if in == nil {
		return
	}
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatalf("converting into %T: %v", out, err)
	}
}

func randomHex(_ *testing.T, n int) string { return operatortest.RandomHex(n) }

// stackableDriver builds the driver Pod of a Stackable SparkApplication
// (docs/operators.md "Stackable operator for Apache Spark"): the operator's driver pod
// template with spec.driver.podOverrides merged over it (testkit/operatortest
// StackableDriverTemplate, shared with runtime/blackbox), handed to spark-submit in cluster
// mode with the conf stackabletech/spark-k8s-operator rust/operator-binary/src/crd/mod.rs
// build_command gives it: podTemplateContainerName=spark, the namespace, the product image,
// spark.kubernetes.memoryOverheadFactor=0.0, spark.driver.memory from
// spec.driver.config.resources.memory.limit less the operator's overhead
// (subtract_spark_memory_overhead: max(384 MiB, limit − limit/(1+f)), f 0.1 with a main class,
// else 0.4; constants.rs), spark.executor.instances from spec.executor.replicas, then every
// spec.sparkConf entry, which wins (a later --conf). spark-submit names the run
// spark-<32 hex> and the Pod <name>-<16 hex>-driver unless the conf names it. The image's
// entrypoint gets Spark's `driver --properties-file …` as with every operator: Spark sets the
// driver container's args, not its command (BasicDriverFeatureStep, DriverCommandFeatureStep).
func stackableDriver(t *testing.T, app *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap) {
	t.Helper()
	b, err := json.Marshal(app.Object)
	if err != nil {
		t.Fatal(err)
	}
	rn, err := kyaml.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	tmplNode, image, err := operatortest.StackableDriverTemplate(rn)
	if err != nil {
		t.Fatal(err)
	}
	tmplJSON, err := tmplNode.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &corev1.PodTemplateSpec{}
	if err := json.Unmarshal(tmplJSON, tmpl); err != nil {
		t.Fatalf("the Stackable driver template: %v", err)
	}
	spec, _, _ := unstructured.NestedMap(app.Object, "spec")
	name := app.GetName()
	s := submission{
		Template: tmpl, Namespace: app.GetNamespace(), AppID: "spark-" + randomHex(t, 16), AppName: name,
		SparkVersion: strField(spec, "sparkImage", "productVersion"), Image: image,
		MainClass: strField(spec, "mainClass"), MainResource: strField(spec, "mainApplicationFile"),
		Cores: 1, MemoryMiB: 1024,
		Conf: map[string]string{
			"spark.kubernetes.driver.podTemplateContainerName": operatortest.StackableContainer,
			"spark.kubernetes.namespace":                       app.GetNamespace(),
			"spark.kubernetes.driver.container.image":          image,
			"spark.kubernetes.memoryOverheadFactor":            "0.0",
		},
	}
	s.Args, _, _ = unstructured.NestedStringSlice(spec, "args")
	if l := strField(spec, "driver", "config", "resources", "memory", "limit"); l != "" {
		q, err := resource.ParseQuantity(l)
		if err != nil {
			t.Fatalf("spec.driver.config.resources.memory.limit %q: %v", l, err)
		}
		limit := q.Value() >> 20
		f := 0.4
		if s.MainClass != "" {
			f = 0.1
		}
		s.MemoryMiB = limit
		if limit >= 384 {
			s.MemoryMiB = limit - max(384, limit-int64(float64(limit)/(1+f)))
		}
		s.Conf["spark.driver.memory"] = fmt.Sprintf("%dm", s.MemoryMiB)
	}
	if r, ok, _ := unstructured.NestedInt64(spec, "executor", "replicas"); ok {
		s.Conf["spark.executor.instances"] = strconv.FormatInt(r, 10)
	}
	confs, _, _ := unstructured.NestedStringMap(spec, "sparkConf")
	for k, v := range confs {
		s.Conf[k] = v
	}
	s.ContainerName = s.Conf["spark.kubernetes.driver.podTemplateContainerName"]
	s.ServiceAccount = s.Conf["spark.kubernetes.authenticate.driver.serviceAccountName"]
	s.PodName = s.Conf["spark.kubernetes.driver.pod.name"]
	if s.PodName == "" {
		s.PodName = name + "-" + randomHex(t, 8) + "-driver"
	}
	return sparkDriver(t, s)
}
