package operatortest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"

	"github.com/sparkui/sparkui/internal/names"
)

// Submission is what an operator hands Spark's KubernetesDriverBuilder: the driver template
// (spark.kubernetes.driver.podTemplateFile), the conf, and the identity Spark gives the run.
type Submission struct {
	Template       *corev1.PodTemplateSpec // nil: Spark builds the Pod from nothing
	ContainerName  string                  // spark.kubernetes.driver.podTemplateContainerName
	Namespace      string
	PodName        string // spark.kubernetes.driver.pod.name
	AppID          string // spark.app.id, the spark-app-selector label
	AppName        string
	SparkVersion   string
	Image          string
	ServiceAccount string
	Conf           map[string]string // sparkConf and what the operator adds, spark.kubernetes.driver.label.* included
	Cores          int
	CoreLimit      string
	MemoryMiB      int64
	MainClass      string
	MainResource   string
	Args           []string
}

// SparkDriver builds the driver Pod and its spark.properties ConfigMap as Spark 3.5/4.0 does
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
// The headless driver Service is DriverService's.
func SparkDriver(s Submission) (*corev1.Pod, *corev1.ConfigMap, error) {
	pod := &corev1.Pod{}
	if s.Template != nil {
		tmpl := s.Template.DeepCopy()
		pod.ObjectMeta, pod.Spec = tmpl.ObjectMeta, tmpl.Spec
	}
	idx := -1
	for i, c := range pod.Spec.Containers {
		if s.ContainerName != "" && c.Name == s.ContainerName {
			idx = i
		}
	}
	if idx < 0 {
		if len(pod.Spec.Containers) == 0 {
			pod.Spec.Containers = []corev1.Container{{}}
		}
		idx = 0
	}
	uiPort, err := UIPort(s.Conf)
	if err != nil {
		return nil, nil, err
	}
	localDir := "/var/data/spark-" + string(uuid.NewUUID())
	confMap := "spark-drv-" + RandomHex(8) + "-conf-map"

	c := &pod.Spec.Containers[idx]
	if c.Name == "" {
		c.Name = names.DriverContainer
	}
	c.Image = s.Image
	c.ImagePullPolicy = corev1.PullIfNotPresent
	mainClass := s.MainClass
	if mainClass == "" && strings.HasSuffix(s.MainResource, ".py") {
		// A Python application's driver runs PythonRunner (SparkSubmit's PYSPARK path).
		mainClass = "org.apache.spark.deploy.PythonRunner"
	}
	c.Args = append([]string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", mainClass, s.MainResource}, s.Args...)
	c.Ports = append(c.Ports,
		corev1.ContainerPort{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "spark-ui", ContainerPort: int32(uiPort), Protocol: corev1.ProtocolTCP})
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "SPARK_USER", Value: "spark"},
		corev1.EnvVar{Name: "SPARK_APPLICATION_ID", Value: s.AppID},
		corev1.EnvVar{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		corev1.EnvVar{Name: "SPARK_LOCAL_DIRS", Value: localDir},
		corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: "/opt/spark/conf"})
	mem := s.MemoryMiB + max(s.MemoryMiB/10, 384)
	c.Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(s.Cores), resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mem)),
	}
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mem))}
	if s.CoreLimit != "" {
		q, err := resource.ParseQuantity(s.CoreLimit)
		if err != nil {
			return nil, nil, fmt.Errorf("spark.kubernetes.driver.limit.cores %q: %v", s.CoreLimit, err)
		}
		c.Resources.Limits[corev1.ResourceCPU] = q
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
	if s.ServiceAccount != "" {
		pod.Spec.ServiceAccountName = s.ServiceAccount
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Name, pod.Namespace = s.PodName, s.Namespace
	pod.Labels = driverLabels(s, pod.Labels)

	props := map[string]string{}
	for k, v := range s.Conf {
		props[k] = v
	}
	for k, v := range map[string]string{
		"spark.app.id": s.AppID, "spark.app.name": s.AppName, "spark.kubernetes.driver.pod.name": s.PodName,
		"spark.kubernetes.namespace": s.Namespace, "spark.submit.deployMode": "cluster",
		"spark.kubernetes.submitInDriver": "true", "spark.master": "k8s://https://kubernetes.default.svc:443",
		"spark.kubernetes.container.image": s.Image, "spark.driver.port": "7078", "spark.driver.blockManager.port": "7079",
	} {
		props[k] = v
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: confMap, Namespace: s.Namespace},
		Immutable:  ptr.To(true),
		Data:       map[string]string{"spark.properties": JavaProperties(props), "spark.kubernetes.namespace": s.Namespace},
	}
	return pod, cm, nil
}

// driverLabels are the driver Pod's labels (BasicDriverFeatureStep): the template's, then
// spark.kubernetes.driver.label.*, then Spark's own, which win.
func driverLabels(s Submission, template map[string]string) map[string]string {
	labels := map[string]string{}
	for k, v := range template {
		labels[k] = v
	}
	for k, v := range s.Conf {
		if l, ok := strings.CutPrefix(k, "spark.kubernetes.driver.label."); ok {
			labels[l] = v
		}
	}
	labels["spark-app-name"] = s.AppName
	labels["spark-version"] = s.SparkVersion
	labels[names.LabelAppSelector] = s.AppID
	labels[names.LabelSparkRole] = names.RoleDriver
	return labels
}

// UIPort is spark.ui.port, 4040 unless the conf sets it.
func UIPort(conf map[string]string) (int, error) {
	p := conf["spark.ui.port"]
	if p == "" {
		return 4040, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0, fmt.Errorf("spark.ui.port %q: %v", p, err)
	}
	return n, nil
}

// DriverService is the headless Service Spark creates for the driver's hostname
// (features/DriverServiceFeatureStep, Spark 3.5 and 4.0): <resourceNamePrefix>-driver-svc,
// where KubernetesConf.getResourceNamePrefix is `<app name>-<16 hex>` lowercased with
// anything but [a-z0-9-] made '-', or spark-<16 hex>-driver-svc when that exceeds 63
// characters; clusterIP None, selected by the driver's Spark labels (kubernetesConf.labels:
// spark-app-selector, spark-role and spark.kubernetes.driver.label.*), with the driver RPC,
// block manager and UI ports; spark.kubernetes.driver.service.label.* and .annotation.* on
// its metadata. spark-submit creates it after the Pod, owned by it (KubernetesClientApplication
// run: KubernetesUtils.addOwnerReference), as it does the conf ConfigMap.
func DriverService(s Submission) (*corev1.Service, error) {
	uiPort, err := UIPort(s.Conf)
	if err != nil {
		return nil, err
	}
	prefix := strings.ToLower(s.AppName + "-" + RandomHex(8))
	prefix = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			return r
		}
		return '-'
	}, prefix)
	for strings.Contains(prefix, "--") {
		prefix = strings.ReplaceAll(prefix, "--", "-")
	}
	name := prefix + "-driver-svc"
	if len(name) > 63 {
		name = "spark-" + RandomHex(8) + "-driver-svc"
	}
	selector := driverLabels(s, nil)
	delete(selector, "spark-app-name")
	delete(selector, "spark-version")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  selector,
			Ports: []corev1.ServicePort{
				{Name: "driver-rpc-port", Port: 7078, TargetPort: intstr.FromInt32(7078)},
				{Name: "blockmanager", Port: 7079, TargetPort: intstr.FromInt32(7079)},
				{Name: "spark-ui", Port: int32(uiPort), TargetPort: intstr.FromInt32(int32(uiPort))},
			},
		},
	}
	for k, v := range s.Conf {
		if l, ok := strings.CutPrefix(k, "spark.kubernetes.driver.service.label."); ok {
			metav1.SetMetaDataLabel(&svc.ObjectMeta, l, v)
		}
		if a, ok := strings.CutPrefix(k, "spark.kubernetes.driver.service.annotation."); ok {
			metav1.SetMetaDataAnnotation(&svc.ObjectMeta, a, v)
		}
	}
	return svc, nil
}

// JavaProperties writes props as java.util.Properties.store does (`:`, `=` and blanks in
// keys and `:`/`=` in values escaped), sorted.
func JavaProperties(props map[string]string) string {
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

// RandomHex is n random bytes in hex, as KubernetesUtils.uniqueID's and the app id's hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand.Read never fails on Linux (Go 1.24+ it cannot)
	}
	return hex.EncodeToString(b)
}
