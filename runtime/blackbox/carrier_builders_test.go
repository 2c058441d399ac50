package blackbox

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// Labels the operators and controllers put on driver Pods (docs/operators.md).
const (
	labelAppID = "sparkui.dev/application" // the function's build-time identity label

	kubeflowAppName    = "sparkoperator.k8s.io/app-name"
	kubeflowLaunched   = "sparkoperator.k8s.io/launched-by-spark-operator"
	kubeflowSubmission = "sparkoperator.k8s.io/submission-id"
	kubeflowMutated    = "sparkoperator.k8s.io/mutated-by-spark-operator"
	kubeflowScheduled  = "sparkoperator.k8s.io/scheduled-app-name"

	kubeflowConnectName  = "sparkoperator.k8s.io/connect-name"
	kubeflowSparkVersion = "spark-version"

	apacheOperatorName = "spark.operator/name"
	apacheAppName      = "spark.operator/spark-app-name"

	jobControllerUID = "batch.kubernetes.io/controller-uid"
	jobName          = "batch.kubernetes.io/job-name"
	stsPodName       = "statefulset.kubernetes.io/pod-name"
	podTemplateHash  = "pod-template-hash"
)

// kubeflowDriver builds a kubeflow spark-operator driver Pod (docs/operators.md "kubeflow
// spark-operator"). The operator runs spark-submit with
// sparkConf, then the confs it derives: driver.serviceAccount, and the driver labels
// (spark.kubernetes.driver.label.*) — the SparkApplication's metadata.labels (v2.1+),
// driver.labels, app-name, launched-by-spark-operator, submission-id (a new UUID per
// submission). spark-submit gives the driver spark-app-selector=spark-<32 hex>, random per run.
//
// Template injection (webhook false): the operator passes spec.driver.template as
// spark.kubernetes.driver.podTemplateFile with podTemplateContainerName=spark-kubernetes-driver;
// Spark loads it as the Pod and keeps its labels, init containers and volumes.
// Webhook injection (true; v1.x/v2.0 operators, no template): Spark builds the Pod from nothing,
// the operator adds mutated-by-spark-operator=true, and its mutating webhook
// (internal/webhook/sparkpod_defaulter.go) then appends driver.initContainers (unless one of
// the same name and image is there), adds each spec.volumes entry that a driver.volumeMounts
// entry mounts together with that mount into the Spark container, and replaces the Spark
// container's lifecycle with driver.lifecycle.
//
// A ScheduledSparkApplication (scheduled true) runs spec.template as a SparkApplication
// <ssa>-<timestamp in ns> labelled scheduled-app-name=<ssa> (which reaches the driver, v2.1+).
func kubeflowDriver(webhook, scheduled bool) driverBuilder {
	return func(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
		spec := lookup(t, carrier, "spec")
		appName := carrier.GetName()
		appLabels := merge(nil, carrier.GetLabels())
		if scheduled {
			spec = lookup(t, spec, "template")
			appName = fmt.Sprintf("%s-%d", carrier.GetName(), time.Date(2026, 11, 30, 6*run, 0, 0, 0, time.UTC).UnixNano())
			appLabels[kubeflowScheduled] = carrier.GetName()
		}
		driver := lookup(t, spec, "driver")
		conf := lookup(t, spec, "sparkConf")

		pod := &corev1.Pod{}
		if !webhook {
			var tmpl corev1.PodTemplateSpec
			decode(t, driver, &tmpl, "template")
			pod.ObjectMeta, pod.Spec = tmpl.ObjectMeta, tmpl.Spec
		}
		pod.Name = str(t, driver, "podName")
		if pod.Name == "" {
			pod.Name = appName + "-driver"
		}
		confLabels := merge(nil, appLabels, stringMap(t, driver, "labels"), map[string]string{
			kubeflowAppName: appName, kubeflowLaunched: "true", kubeflowSubmission: string(uuid.NewUUID())})
		if webhook {
			confLabels[kubeflowMutated] = "true"
		}
		sa := str(t, driver, "serviceAccount")
		if sa == "" {
			sa = str(t, conf, "spark.kubernetes.authenticate.driver.serviceAccountName")
		}
		image := str(t, driver, "image")
		if image == "" {
			image = str(t, spec, "image")
		}
		idx := sparkContainer(&pod.Spec, names.DriverContainer)
		appID := "spark-" + randomHex(t, 16)
		sparkDriver(pod, idx, image, sa, confPort(t, conf), appID, confLabels)

		if webhook {
			var inits []corev1.Container
			decode(t, driver, &inits, "initContainers")
			for _, ic := range inits {
				dup := false
				for _, have := range pod.Spec.InitContainers {
					dup = dup || (have.Name == ic.Name && have.Image == ic.Image)
				}
				if !dup {
					pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
				}
			}
			var vols []corev1.Volume
			var mounts []corev1.VolumeMount
			decode(t, spec, &vols, "volumes")
			decode(t, driver, &mounts, "volumeMounts")
			for _, m := range mounts {
				for _, v := range vols {
					if v.Name == m.Name {
						pod.Spec.Volumes = append(pod.Spec.Volumes, v)
						pod.Spec.Containers[idx].VolumeMounts = append(pod.Spec.Containers[idx].VolumeMounts, m)
					}
				}
			}
			var lc corev1.Lifecycle
			decode(t, driver, &lc, "lifecycle")
			if lookup(t, driver, "lifecycle") != nil {
				pod.Spec.Containers[idx].Lifecycle = &lc
			}
		}
		// Cluster mode: the driver's conf names its Pod (spark.kubernetes.driver.pod.name).
		return pod, uiOptions{AppID: appID, PodName: pod.Name}
	}
}

// connectServer builds the Pod kubeflow's SparkConnect controller creates
// (kubeflow/spark-operator internal/controller/sparkconnect/reconciler.go mutateServerPod,
// options.go, util.go): named <name>-server; spec.server.template's labels, annotations and
// spec; a container spark-kubernetes-driver when the template has none; in the server
// container (spark-kubernetes-driver, else the first) the image from spec.image when unset,
// command [bash, -c] and start-connect-server.sh's line as args, TCP probes on 15002 unless
// set, env POD_IP and SPARK_NO_DAEMONIZE appended, the spark-conf mount appended, and the
// whole lifecycle replaced by the operator's preStop (stop-connect-server.sh); the spark-conf
// volume appended; labels launched-by-spark-operator, connect-name, spark-role=connect-server
// and spark-version over the template's. The server is the driver in client mode: its UI
// lists spark.app.id when sparkConf sets it, else an id of Spark's making, and
// spark.kubernetes.driver.pod.name=<name>-server (driverConfOption).
func connectServer(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	name := carrier.GetName()
	var tmpl corev1.PodTemplateSpec
	decode(t, carrier, &tmpl, "spec", "server", "template")
	// What sparkui wrote into the template, to check the operator keeps it all.
	written := tmpl.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-server", Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	if len(pod.Spec.Containers) == 0 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: names.DriverContainer})
	}
	idx := 0
	for i, ctr := range pod.Spec.Containers {
		if ctr.Name == names.DriverContainer {
			idx = i
			break
		}
	}
	ctr := &pod.Spec.Containers[idx]
	if ctr.Image == "" {
		ctr.Image = str(t, carrier, "spec", "image")
	}
	ctr.Command = []string{"bash", "-c"}
	ctr.Args = []string{"${SPARK_HOME}/sbin/start-connect-server.sh --master k8s://https://10.0.0.1:443 --conf spark.driver.port=7078 --conf spark.driver.blockManager.port=7079 --conf spark.kubernetes.driver.pod.name=" + name + "-server"}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(15002)}}, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}
	if ctr.StartupProbe == nil {
		ctr.StartupProbe = probe
	}
	if ctr.ReadinessProbe == nil {
		ctr.ReadinessProbe = probe
	}
	ctr.Env = append(ctr.Env,
		corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		corev1.EnvVar{Name: "SPARK_NO_DAEMONIZE", Value: "true"})
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "spark-conf", SubPath: "executor-pod-template.yaml", MountPath: "/tmp/spark/executor-pod-template.yaml", ReadOnly: true})
	ctr.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", "${SPARK_HOME}/sbin/stop-connect-server.sh"}}}}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "spark-conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name + "-conf"},
		Items:                []corev1.KeyToPath{{Key: "executor-pod-template.yaml", Path: "executor-pod-template.yaml"}}}}})
	pod.Labels = merge(pod.Labels, map[string]string{kubeflowLaunched: "true", kubeflowConnectName: name,
		names.LabelSparkRole: "connect-server", kubeflowSparkVersion: str(t, carrier, "spec", "sparkVersion")})

	// Nothing sparkui wrote is lost: its label, the sidecar and its volume reach the Pod as
	// written, and the server container it left untouched (it holds no sparkui mount or hook).
	if pod.Labels[labelAppID] != written.Labels[labelAppID] || written.Labels[labelAppID] == "" {
		t.Fatalf("identity label: template %v, Pod %v", written.Labels, pod.Labels)
	}
	for _, ic := range written.Spec.InitContainers {
		if ic.Name == sidecar.ContainerName {
			if got := sidecarOf(t, pod); got.Image != ic.Image || strings.Join(got.Args, " ") != strings.Join(ic.Args, " ") {
				t.Fatalf("the runtime changed on the way into the Pod: %v", got)
			}
		}
	}
	for _, wc := range written.Spec.Containers {
		for _, m := range wc.VolumeMounts {
			if m.Name == sidecar.VolumeName || m.Name == sidecar.AuthVolumeName {
				t.Fatalf("sparkui mounted %s into container %s, where it serves only a hook the operator replaces", m.Name, wc.Name)
			}
		}
	}
	ui := uiOptions{AppID: fmt.Sprintf("spark-application-%d", time.Now().UnixMilli()), PodName: pod.Name}
	if id := str(t, carrier, "spec", "sparkConf", "spark.app.id"); id != "" {
		ui.AppID = id
	}
	return pod, ui
}

// apacheDriver builds an Apache spark-kubernetes-operator (1.0.0) driver Pod
// (docs/operators.md "Apache spark-kubernetes-operator"): Spark's
// KubernetesDriverBuilder in the operator, from spec.driverSpec.podTemplateSpec and
// spec.sparkConf. The app id is <name>-<attempt> (attempt 0 first; short names are not
// hashed), the Pod <app id>-driver; the Spark container is the one named by
// spark.kubernetes.driver.podTemplateContainerName, else the first; the ServiceAccount is
// spark.kubernetes.authenticate.driver.serviceAccountName, else the template's; labels
// spark.operator/name=spark-kubernetes-operator and spark.operator/spark-app-name=<name> (by
// spark.kubernetes.driver.label.* and OwnerResourceDecorator) and Spark's on top of the
// template's; SecurityContextDecorator sets allowPrivilegeEscalation=false on every container
// and init container that leaves it unset.
func apacheDriver(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	spec := lookup(t, carrier, "spec")
	conf := lookup(t, spec, "sparkConf")
	var tmpl corev1.PodTemplateSpec
	decode(t, spec, &tmpl, "driverSpec", "podTemplateSpec")
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	appID := fmt.Sprintf("%s-%d", carrier.GetName(), run-1)
	pod.Name = appID + "-driver"
	sa := str(t, conf, "spark.kubernetes.authenticate.driver.serviceAccountName")
	// The upstream examples' image placeholder, filled with the runtime version as their
	// build does.
	image := strings.ReplaceAll(str(t, conf, "spark.kubernetes.container.image"), "{{SPARK_VERSION}}", str(t, spec, "runtimeVersions", "sparkVersion"))
	idx := sparkContainer(&pod.Spec, str(t, conf, "spark.kubernetes.driver.podTemplateContainerName"))
	sparkDriver(pod, idx, image, sa, confPort(t, conf), appID, map[string]string{
		apacheOperatorName: "spark-kubernetes-operator", apacheAppName: carrier.GetName()})
	no := false
	for _, cs := range []([]corev1.Container){pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].SecurityContext == nil {
				cs[i].SecurityContext = &corev1.SecurityContext{}
			}
			if cs[i].SecurityContext.AllowPrivilegeEscalation == nil {
				cs[i].SecurityContext.AllowPrivilegeEscalation = &no
			}
		}
	}
	return pod, uiOptions{AppID: appID, PodName: pod.Name}
}

// workloadDriver builds the Pod a workload controller creates from its pod template
// (CronJob: spec.jobTemplate.spec.template, through the Job the CronJob controller creates),
// with the controller's labels: Job — batch.kubernetes.io/controller-uid=<the Job's UID>,
// batch.kubernetes.io/job-name and their legacy forms controller-uid and job-name, Pod
// <job>-<5 random>; CronJob — the same for its run's Job <cronjob>-<scheduled minutes>;
// StatefulSet — statefulset.kubernetes.io/pod-name=<name>-0, apps.kubernetes.io/pod-index,
// controller-revision-hash, hostname and subdomain; Deployment (through its ReplicaSet) —
// pod-template-hash (FNV-32a of the template, SafeEncodeString'd as the controller does; the
// hash input differs, its shape does not), Pod <name>-<hash>-<5 random>. The Pod is the
// driver in client mode: Spark lists its application as spark-application-<millis> (or
// local-<millis> with a local master) and does not set spark.kubernetes.driver.pod.name.
func workloadDriver(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	name := carrier.GetName()
	path := []string{"spec", "template"}
	if carrier.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template"}
	}
	var tmpl corev1.PodTemplateSpec
	decode(t, carrier, &tmpl, path...)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: merge(nil, tmpl.Labels), Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
	var controller map[string]string
	switch carrier.GetKind() {
	case "Job", "CronJob":
		job := name
		if carrier.GetKind() == "CronJob" {
			job = fmt.Sprintf("%s-%d", name, time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC).Unix()/60+int64(24*60*(run-1)))
		}
		uid := string(uuid.NewUUID())
		controller = map[string]string{jobControllerUID: uid, jobName: job, "controller-uid": uid, "job-name": job}
		pod.Name = job + "-" + utilrand.String(5)
	case "StatefulSet":
		pod.Name = name + "-0"
		controller = map[string]string{stsPodName: pod.Name, "apps.kubernetes.io/pod-index": "0", "controller-revision-hash": name + "-" + templateHash(t, tmpl)}
		pod.Spec.Hostname, pod.Spec.Subdomain = pod.Name, str(t, carrier, "spec", "serviceName")
	case "Deployment":
		hash := templateHash(t, tmpl)
		controller = map[string]string{podTemplateHash: hash}
		pod.Name = name + "-" + hash + "-" + utilrand.String(5)
	default:
		t.Fatalf("not a workload: %s", carrier.GetKind())
	}
	pod.Labels = merge(pod.Labels, controller)
	// What the UI lists: spark.app.id when the driver's command line sets it, else Spark's
	// generated id; spark.kubernetes.driver.pod.name only when set (its $(VAR)s expanded by the
	// kubelet from the container's env).
	ui := uiOptions{AppID: fmt.Sprintf("spark-application-%d", time.Now().UnixMilli())}
	driver := pod.Spec.Containers[sparkContainer(&pod.Spec, names.DriverContainer)]
	for _, a := range expandArgs(append(append([]string{}, driver.Command...), driver.Args...), containerEnv(t, pod, driver)) {
		if v, ok := strings.CutPrefix(a, "spark.kubernetes.driver.pod.name="); ok {
			ui.PodName = v
		}
		if v, ok := strings.CutPrefix(a, "spark.app.id="); ok {
			ui.AppID = v
		}
	}
	return pod, ui
}

func templateHash(t *testing.T, tmpl corev1.PodTemplateSpec) string {
	b, err := json.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New32a()
	_, _ = h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}
