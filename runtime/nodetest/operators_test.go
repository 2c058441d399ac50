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
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/names"
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

// connectServer builds the Pod <name>-server and the ConfigMap <name>-conf kubeflow's
// SparkConnect controller creates (kubeflow/spark-operator internal/controller/sparkconnect/
// reconciler.go mutateServerPod, options.go buildStartConnectServerArgs, util.go): the
// template's labels, annotations and spec; in the server container (spark-kubernetes-driver,
// else the first) the image from spec.image when unset, command [bash, -c] with
// start-connect-server.sh's line (--master, spark.kubernetes.namespace, the images,
// spec.sparkConf shell-quoted, the driver labels, bindAddress, ports 7078/7079, the pod name
// <name>-server; the line's spark.driver.host command substitution is left out: the stand-in
// reads no host), TCP startup and readiness probes on 15002, env POD_IP and
// SPARK_NO_DAEMONIZE, the spark-conf mount of the executor template, and its whole
// lifecycle replaced by the operator's preStop (stop-connect-server.sh); labels
// launched-by-spark-operator, connect-name, spark-role=connect-server and spark-version.
func connectServer(t *testing.T, sc *unstructured.Unstructured) (*corev1.Pod, *corev1.ConfigMap) {
	t.Helper()
	name := sc.GetName()
	spec, _, _ := unstructured.NestedMap(sc.Object, "spec")
	tmplMap, _, _ := unstructured.NestedMap(spec, "server", "template")
	var tmpl corev1.PodTemplateSpec
	fromMap(t, tmplMap, &tmpl)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-server", Namespace: sc.GetNamespace(),
		Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	if len(pod.Spec.Containers) == 0 {
		pod.Spec.Containers = []corev1.Container{{Name: names.DriverContainer}}
	}
	idx := 0
	for i, c := range pod.Spec.Containers {
		if c.Name == names.DriverContainer {
			idx = i
			break
		}
	}
	c := &pod.Spec.Containers[idx]
	if c.Image == "" {
		c.Image = strField(spec, "image")
	}
	line := []string{"${SPARK_HOME}/sbin/start-connect-server.sh", "--master", "k8s://https://" + "10.0.0.1:443",
		"--conf", "spark.kubernetes.namespace=" + sc.GetNamespace(),
		"--conf", "spark.kubernetes.container.image=" + c.Image, "--conf", "spark.kubernetes.executor.container.image=" + c.Image}
	conf, _, _ := unstructured.NestedStringMap(spec, "sparkConf")
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "spark.kubernetes.driver.pod.name" {
			line = append(line, "--conf", "'"+strings.ReplaceAll(k+"="+conf[k], "'", `'"'"'`)+"'")
		}
	}
	line = append(line,
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/launched-by-spark-operator=true",
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/connect-name="+name,
		"--conf", "spark.driver.bindAddress=0.0.0.0", "--conf", "spark.driver.port=7078",
		"--conf", "spark.driver.blockManager.port=7079", "--conf", "spark.kubernetes.driver.pod.name="+name+"-server")
	c.Command = []string{"bash", "-c"}
	c.Args = []string{strings.Join(line, " ")}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(15002)}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1}
	if c.StartupProbe == nil {
		c.StartupProbe = probe
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = probe.DeepCopy()
	}
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		corev1.EnvVar{Name: "SPARK_NO_DAEMONIZE", Value: "true"})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "spark-conf", SubPath: "executor-pod-template.yaml",
		MountPath: "/tmp/spark/executor-pod-template.yaml", ReadOnly: true})
	c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{"bash", "-c", "${SPARK_HOME}/sbin/stop-connect-server.sh"}}}}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "spark-conf", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name + "-conf"},
			Items: []corev1.KeyToPath{{Key: "executor-pod-template.yaml", Path: "executor-pod-template.yaml"}}}}})
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels["sparkoperator.k8s.io/launched-by-spark-operator"] = "true"
	labels["sparkoperator.k8s.io/connect-name"] = name
	labels[names.LabelSparkRole] = "connect-server"
	labels["spark-version"] = strField(spec, "sparkVersion")
	pod.Labels = labels
	execTmpl, _, _ := unstructured.NestedMap(spec, "executor", "template")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-conf", Namespace: sc.GetNamespace()},
		Data: map[string]string{"executor-pod-template.yaml": toYAML(t, execTmpl)}}
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

func toYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
