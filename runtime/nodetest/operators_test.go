package nodetest

// The driver Pods the Spark operators build from the function's output, for the node: no
// operator runs here, so the test builds what it would create — Spark's own driver Pod (with
// its spark.properties ConfigMap, which the stand-in UI reads as Spark does) from the
// operator's submission — and creates it. The operators' behaviour is documented, with the
// source files, in docs/operators.md; runtime/blackbox/carriers_test.go builds the same Pods
// for the control plane without a kubelet (without Spark's conf volume and env, which no
// process read there).

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/operatortest"
)

// submission is what an operator hands Spark's KubernetesDriverBuilder: the driver template
// (spark.kubernetes.driver.podTemplateFile), the conf, and the identity Spark gives the run.
type submission struct {
	template      *corev1.PodTemplateSpec // nil: Spark builds the Pod from nothing
	containerName string                  // spark.kubernetes.driver.podTemplateContainerName
	namespace     string
	podName       string // spark.kubernetes.driver.pod.name
	appID         string // spark.app.id, the spark-app-selector label
	appName       string
	sparkVersion  string
	image         string
	sa            string
	conf          map[string]string // sparkConf and what the operator adds, spark.kubernetes.driver.label.* included
	cores         int
	coreLimit     string
	memoryMiB     int64
	mainClass     string
	mainResource  string
	args          []string
}

// sparkDriver builds the driver Pod and its spark.properties ConfigMap as Spark 3.5/4.0 does
// in cluster mode (apache/spark resource-managers/kubernetes/core/src/main/scala/org/apache/
// spark/deploy/k8s): KubernetesDriverBuilder starts from the template (its metadata, init
// containers and volumes kept), KubernetesUtils.selectSparkContainer picks the container
// named by podTemplateContainerName, else the first, else a new one;
// features/BasicDriverFeatureStep names it spark-kubernetes-driver when unnamed and sets its
// image, ports (driver-rpc-port, blockmanager, spark-ui = spark.ui.port), env (SPARK_USER,
// SPARK_APPLICATION_ID, SPARK_DRIVER_BIND_ADDRESS from status.podIP), resources (cores as
// the CPU request, memory + max(10 %, 384 MiB) overhead as request and limit, the CPU limit
// from spark.kubernetes.driver.limit.cores), the labels spark-app-selector, spark-role,
// spark-app-name, spark-version over the template's and spark.kubernetes.driver.label.*,
// restartPolicy Never; DriverKubernetesCredentialsFeatureStep the ServiceAccount;
// LocalDirsFeatureStep the emptyDir spark-local-dir-1 and SPARK_LOCAL_DIRS;
// DriverCommandFeatureStep the arguments `driver --properties-file … --class … <resource>
// <args>`; submit/KubernetesClientUtils the ConfigMap spark-drv-<16 hex>-conf-map (key
// spark.properties) mounted at /opt/spark/conf as volume spark-conf-volume-driver with
// SPARK_CONF_DIR. examples/spark-submit/manifests.yaml is that output for one application.
// The headless driver Service (DriverServiceFeatureStep) is left out: nothing here uses it.
func sparkDriver(t *testing.T, s submission) (*corev1.Pod, *corev1.ConfigMap) {
	t.Helper()
	pod := &corev1.Pod{}
	if s.template != nil {
		tmpl := s.template.DeepCopy()
		pod.ObjectMeta, pod.Spec = tmpl.ObjectMeta, tmpl.Spec
	}
	idx := -1
	for i, c := range pod.Spec.Containers {
		if s.containerName != "" && c.Name == s.containerName {
			idx = i
		}
	}
	if idx < 0 {
		if len(pod.Spec.Containers) == 0 {
			pod.Spec.Containers = []corev1.Container{{}}
		}
		idx = 0
	}
	uiPort := 4040
	if p := s.conf["spark.ui.port"]; p != "" {
		var err error
		if uiPort, err = strconv.Atoi(p); err != nil {
			t.Fatalf("spark.ui.port %q: %v", p, err)
		}
	}
	localDir := "/var/data/spark-" + string(uuid.NewUUID())
	confMap := "spark-drv-" + randomHex(t, 8) + "-conf-map"

	c := &pod.Spec.Containers[idx]
	if c.Name == "" {
		c.Name = names.DriverContainer
	}
	c.Image = s.image
	c.ImagePullPolicy = corev1.PullIfNotPresent
	mainClass := s.mainClass
	if mainClass == "" && strings.HasSuffix(s.mainResource, ".py") {
		// A Python application's driver runs PythonRunner (SparkSubmit's PYSPARK path).
		mainClass = "org.apache.spark.deploy.PythonRunner"
	}
	c.Args = append([]string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", mainClass, s.mainResource}, s.args...)
	c.Ports = append(c.Ports,
		corev1.ContainerPort{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "spark-ui", ContainerPort: int32(uiPort), Protocol: corev1.ProtocolTCP})
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "SPARK_USER", Value: "spark"},
		corev1.EnvVar{Name: "SPARK_APPLICATION_ID", Value: s.appID},
		corev1.EnvVar{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		corev1.EnvVar{Name: "SPARK_LOCAL_DIRS", Value: localDir},
		corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: "/opt/spark/conf"})
	mem := s.memoryMiB + max(s.memoryMiB/10, 384)
	c.Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(s.cores), resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mem)),
	}
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mem))}
	if s.coreLimit != "" {
		c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse(s.coreLimit)
	}
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: "spark-local-dir-1", MountPath: localDir},
		corev1.VolumeMount{Name: "spark-conf-volume-driver", MountPath: "/opt/spark/conf"})
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		corev1.Volume{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "spark-conf-volume-driver", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: confMap},
			Items:                []corev1.KeyToPath{{Key: "spark.properties", Path: "spark.properties", Mode: ptr.To[int32](0o644)}},
		}}})
	if s.sa != "" {
		pod.Spec.ServiceAccountName = s.sa
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Name, pod.Namespace = s.podName, s.namespace
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	for k, v := range s.conf {
		if l, ok := strings.CutPrefix(k, "spark.kubernetes.driver.label."); ok {
			labels[l] = v
		}
	}
	labels["spark-app-name"] = s.appName
	labels["spark-version"] = s.sparkVersion
	labels[names.LabelAppSelector] = s.appID
	labels[names.LabelSparkRole] = names.RoleDriver
	pod.Labels = labels

	props := map[string]string{}
	for k, v := range s.conf {
		props[k] = v
	}
	for k, v := range map[string]string{
		"spark.app.id": s.appID, "spark.app.name": s.appName, "spark.kubernetes.driver.pod.name": s.podName,
		"spark.kubernetes.namespace": s.namespace, "spark.submit.deployMode": "cluster",
		"spark.kubernetes.submitInDriver": "true", "spark.master": "k8s://https://kubernetes.default.svc:443",
		"spark.kubernetes.container.image": s.image, "spark.driver.port": "7078", "spark.driver.blockManager.port": "7079",
	} {
		props[k] = v
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: confMap, Namespace: s.namespace},
		Immutable:  ptr.To(true),
		Data:       map[string]string{"spark.properties": javaProperties(props), "spark.kubernetes.namespace": s.namespace},
	}
	return pod, cm
}

// javaProperties writes props as java.util.Properties.store does (`:`, `=` and blanks in
// keys and `:`/`=` in values escaped), sorted.
func javaProperties(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	esc := strings.NewReplacer(`\`, `\\`, ":", `\:`, "=", `\=`)
	var b strings.Builder
	b.WriteString("#Java properties built from Kubernetes config map\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", esc.Replace(k), esc.Replace(props[k]))
	}
	return b.String()
}

// kubeflowDriver builds the driver Pod of a kubeflow spark-operator (v2) submission of a
// SparkApplication's spec (docs/operators.md "kubeflow spark-operator"; kubeflow/spark-operator
// internal/controller/sparkapplication/submission.go): spark-submit with spec.sparkConf, then
// the operator's driver conf — its ServiceAccount (driver.serviceAccount), cores, coreLimit
// and memory, the driver labels (the application's metadata.labels, driver.labels,
// sparkoperator.k8s.io/app-name, launched-by-spark-operator, submission-id = a new UUID), and
// with a driver.template that template as spark.kubernetes.driver.podTemplateFile with
// podTemplateContainerName spark-kubernetes-driver. spark-submit names the run
// spark-<32 hex> (KubernetesConf.getKubernetesAppId) and the Pod driver.podName, else
// <app>-driver.
//
// webhook: the v1.x/v2.0 route (no template): the operator adds
// sparkoperator.k8s.io/mutated-by-spark-operator=true, and its mutating webhook
// (internal/webhook/sparkpod_defaulter.go) then appends driver.initContainers, adds each
// spec.volumes entry a driver.volumeMounts entry names together with that mount into the
// Spark container, and sets the container's lifecycle from driver.lifecycle.
//
// A ScheduledSparkApplication's run (scheduled != ""): spec.template as a SparkApplication
// <name>-<unix nanoseconds> labelled sparkoperator.k8s.io/scheduled-app-name=<name>
// (internal/controller/scheduledsparkapplication/controller.go), which reaches the driver.
func kubeflowDriver(t *testing.T, app *unstructured.Unstructured, webhook bool) (*corev1.Pod, *corev1.ConfigMap) {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(app.Object, "spec")
	appName := app.GetName()
	appLabels := map[string]string{}
	for k, v := range app.GetLabels() {
		appLabels[k] = v
	}
	if app.GetKind() == "ScheduledSparkApplication" {
		spec, _, _ = unstructured.NestedMap(spec, "template")
		appName = fmt.Sprintf("%s-%d", app.GetName(), time.Now().UnixNano())
		appLabels["sparkoperator.k8s.io/scheduled-app-name"] = app.GetName()
	}
	driver, _, _ := unstructured.NestedMap(spec, "driver")
	s := submission{
		namespace: app.GetNamespace(), appName: appName, appID: "spark-" + randomHex(t, 16),
		sparkVersion: strField(spec, "sparkVersion"), image: strField(driver, "image"),
		sa: strField(driver, "serviceAccount"), coreLimit: strField(driver, "coreLimit"),
		mainClass: strField(spec, "mainClass"), mainResource: strField(spec, "mainApplicationFile"),
		conf: map[string]string{}, cores: 1, memoryMiB: 1024,
	}
	if s.image == "" {
		s.image = strField(spec, "image")
	}
	switch v := driver["cores"].(type) {
	case int64:
		s.cores = int(v)
	case float64:
		s.cores = int(v)
	}
	if m := strField(driver, "memory"); m != "" {
		s.memoryMiB = sparkMiB(t, m)
	}
	args, _, _ := unstructured.NestedStringSlice(spec, "arguments")
	s.args = args
	confs, _, _ := unstructured.NestedStringMap(spec, "sparkConf")
	for k, v := range confs {
		s.conf[k] = v
	}
	s.podName = strField(driver, "podName")
	if s.podName == "" {
		s.podName = appName + "-driver"
	}
	driverLabels, _, _ := unstructured.NestedStringMap(driver, "labels")
	labels := map[string]string{}
	for _, m := range []map[string]string{appLabels, driverLabels, {
		"sparkoperator.k8s.io/app-name": appName, "sparkoperator.k8s.io/launched-by-spark-operator": "true",
		"sparkoperator.k8s.io/submission-id": string(uuid.NewUUID()),
	}} {
		for k, v := range m {
			labels[k] = v
		}
	}
	if webhook {
		labels["sparkoperator.k8s.io/mutated-by-spark-operator"] = "true"
	}
	for k, v := range labels {
		s.conf["spark.kubernetes.driver.label."+k] = v
	}
	if tmpl, ok := driver["template"].(map[string]any); ok && !webhook {
		s.template = &corev1.PodTemplateSpec{}
		fromMap(t, tmpl, s.template)
		s.containerName = names.DriverContainer
	}
	pod, cm := sparkDriver(t, s)
	if webhook {
		idx := 0
		for i, c := range pod.Spec.Containers {
			if c.Name == names.DriverContainer {
				idx = i
			}
		}
		var inits []corev1.Container
		fromMap(t, driver["initContainers"], &inits)
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, inits...)
		var vols []corev1.Volume
		var mounts []corev1.VolumeMount
		fromMap(t, spec["volumes"], &vols)
		fromMap(t, driver["volumeMounts"], &mounts)
		for _, m := range mounts {
			for _, v := range vols {
				if v.Name == m.Name {
					pod.Spec.Volumes = append(pod.Spec.Volumes, v)
					pod.Spec.Containers[idx].VolumeMounts = append(pod.Spec.Containers[idx].VolumeMounts, m)
				}
			}
		}
		if lc, ok := driver["lifecycle"]; ok {
			pod.Spec.Containers[idx].Lifecycle = &corev1.Lifecycle{}
			fromMap(t, lc, pod.Spec.Containers[idx].Lifecycle)
		}
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
		template: tmpl, containerName: conf["spark.kubernetes.driver.podTemplateContainerName"],
		namespace: app.GetNamespace(), podName: appID + "-driver", appID: appID, appName: app.GetName(),
		sparkVersion: strField(spec, "runtimeVersions", "sparkVersion"), image: conf["spark.kubernetes.container.image"],
		sa: conf["spark.kubernetes.authenticate.driver.serviceAccountName"], conf: map[string]string{},
		cores: 1, memoryMiB: 1024, mainClass: strField(spec, "mainClass"), mainResource: strField(spec, "jars"),
	}
	s.args, _, _ = unstructured.NestedStringSlice(spec, "driverArgs")
	for k, v := range conf {
		s.conf[k] = v
	}
	s.conf["spark.kubernetes.driver.label.spark.operator/name"] = "spark-kubernetes-operator"
	s.conf["spark.kubernetes.driver.label.spark.operator/spark-app-name"] = app.GetName()
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

// sparkMiB reads a Spark memory string (JVM form: 512m, 1g, 2048k) as MiB.
func sparkMiB(t *testing.T, s string) int64 {
	t.Helper()
	s = strings.ToLower(strings.TrimSpace(s))
	mult := map[byte]float64{'k': 1.0 / 1024, 'm': 1, 'g': 1024, 't': 1024 * 1024}
	unit := s[len(s)-1]
	f, ok := mult[unit]
	if ok {
		s = strings.TrimSuffix(s, "b")
		s = s[:len(s)-1]
	} else {
		f = 1.0 / (1024 * 1024)
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("Spark memory %q: %v", s, err)
	}
	return int64(n * f)
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

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
		template: tmpl, namespace: app.GetNamespace(), appID: "spark-" + randomHex(t, 16), appName: name,
		sparkVersion: strField(spec, "sparkImage", "productVersion"), image: image,
		mainClass: strField(spec, "mainClass"), mainResource: strField(spec, "mainApplicationFile"),
		cores: 1, memoryMiB: 1024,
		conf: map[string]string{
			"spark.kubernetes.driver.podTemplateContainerName": operatortest.StackableContainer,
			"spark.kubernetes.namespace":                       app.GetNamespace(),
			"spark.kubernetes.driver.container.image":          image,
			"spark.kubernetes.memoryOverheadFactor":            "0.0",
		},
	}
	s.args, _, _ = unstructured.NestedStringSlice(spec, "args")
	if l := strField(spec, "driver", "config", "resources", "memory", "limit"); l != "" {
		q, err := resource.ParseQuantity(l)
		if err != nil {
			t.Fatalf("spec.driver.config.resources.memory.limit %q: %v", l, err)
		}
		limit := q.Value() >> 20
		f := 0.4
		if s.mainClass != "" {
			f = 0.1
		}
		s.memoryMiB = limit
		if limit >= 384 {
			s.memoryMiB = limit - max(384, limit-int64(float64(limit)/(1+f)))
		}
		s.conf["spark.driver.memory"] = fmt.Sprintf("%dm", s.memoryMiB)
	}
	if r, ok, _ := unstructured.NestedInt64(spec, "executor", "replicas"); ok {
		s.conf["spark.executor.instances"] = strconv.FormatInt(r, 10)
	}
	confs, _, _ := unstructured.NestedStringMap(spec, "sparkConf")
	for k, v := range confs {
		s.conf[k] = v
	}
	s.containerName = s.conf["spark.kubernetes.driver.podTemplateContainerName"]
	s.sa = s.conf["spark.kubernetes.authenticate.driver.serviceAccountName"]
	s.podName = s.conf["spark.kubernetes.driver.pod.name"]
	if s.podName == "" {
		s.podName = name + "-" + randomHex(t, 8) + "-driver"
	}
	return sparkDriver(t, s)
}
