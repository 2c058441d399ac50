package app

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// carrierProfile is what sparkui knows of one sort of carrier object, in one place: which
// objects it is, where the driver's pod spec is, which label tells one run's driver Pod from
// another's, which field sets the driver's ServiceAccount, and the function that reads the
// rest. A new carrier is a row here plus its detect function.
type carrierProfile struct {
	kind CarrierKind
	// apiVersions and objectKind are the objects the row matches.
	apiVersions []string
	objectKind  string
	// base is the path of the part that holds the driver (the SparkApplicationSpec, a
	// workload's pod template); podSpec is the driver's pod spec under it.
	base, podSpec []string
	// runLabel is the label only one run's driver Pod carries, runEnv the env var the runtime
	// reads its value from (RunLabel); "" for a spark-submit Pod, whose app id is known.
	runLabel, runEnv string
	// saField is the field that would set the driver's ServiceAccount when none is set, under
	// base; nil is the pod spec's serviceAccountName. saConf: it is that key of the conf.
	saField []string
	saConf  bool
	// sparkIdentity: the identity label is Spark's own spark-app-selector on the driver Pod,
	// which sparkui fills in when missing and never removes.
	sparkIdentity bool
	// operatorContainer: the operator fills in a driver container the template lacks, so
	// sparkui may add one named spark-kubernetes-driver; a Pod or workload without one runs
	// no driver.
	operatorContainer bool
	// pinContainer: transform pins the driver container's name in the conf
	// (transform.PinDriverContainer): the Apache operator watches every container as a main
	// one unless the conf names the driver's.
	pinContainer bool
	// role is the spark-role label value the driver Pod ends up with, "" for Spark's own
	// "driver": the runtime's bind selector names it, so it must be what the Pod really
	// carries, whatever the template says.
	role string
	// operatorLifecycle: the operator replaces the driver container's whole lifecycle, so a
	// preStop hook sparkui writes there never reaches the Pod; sparkui writes nothing into
	// that container and the runtime withdraws on SIGTERM (a native sidecar gets it only
	// after the driver container has exited) or as soon as the UI goes away.
	operatorLifecycle bool
	// operatorServices names the Services the operator creates for the object at run time,
	// each with who makes it and why (internal/names/operators.go): no UI Service may take
	// one, as the operator would overwrite it. nil: none.
	operatorServices func(obj *yaml.RNode, name string) map[string]string
	// detect reads the object; false when it is not a driver after all (a workload whose pod
	// template is no driver's).
	detect func(c *Carrier, opts CarrierOptions) (bool, error)
}

var (
	kubeflowSA = []string{"driver", "serviceAccount"}
	workload   = func(c *Carrier, opts CarrierOptions) (bool, error) { return c.detectWorkload(opts) }
	kubeflow   = func(c *Carrier, opts CarrierOptions) (bool, error) { return true, c.detectKubeflow(opts) }
	apache     = func(c *Carrier, _ CarrierOptions) (bool, error) { return true, c.detectApache() }
	connect    = func(c *Carrier, _ CarrierOptions) (bool, error) { return true, c.detectSparkConnect() }
	// kubeflowUIService: a SparkApplication's own UI Service (names.KubeflowUIService). A
	// ScheduledSparkApplication's runs have names not known at build time.
	kubeflowUIService = func(_ *yaml.RNode, name string) map[string]string {
		return map[string]string{names.KubeflowUIService(name): "the kubeflow spark-operator's UI Service of SparkApplication " + name +
			" (" + names.KubeflowUIServicePattern + ")"}
	}
)

// carrierProfiles are the carriers, one row per object kind. Sources of each fact are named
// at the detect functions and in docs/operators.md.
var carrierProfiles = []*carrierProfile{
	{kind: KindPod, apiVersions: []string{"v1"}, objectKind: "Pod", podSpec: []string{"spec"}, sparkIdentity: true,
		detect: func(c *Carrier, _ CarrierOptions) (bool, error) { return c.detectPod() }},
	// Workloads: Kubernetes' own controllers label each run's Pods.
	{kind: KindWorkload, apiVersions: []string{"apps/v1"}, objectKind: "Deployment", base: []string{"spec", "template"}, podSpec: []string{"spec"},
		runLabel: "pod-template-hash", runEnv: sidecar.EnvRunLabel, detect: workload},
	{kind: KindWorkload, apiVersions: []string{"apps/v1"}, objectKind: "StatefulSet", base: []string{"spec", "template"}, podSpec: []string{"spec"},
		runLabel: "statefulset.kubernetes.io/pod-name", runEnv: sidecar.EnvRunLabel, detect: workload},
	{kind: KindWorkload, apiVersions: []string{"batch/v1"}, objectKind: "Job", base: []string{"spec", "template"}, podSpec: []string{"spec"},
		runLabel: "batch.kubernetes.io/controller-uid", runEnv: sidecar.EnvRunLabel, detect: workload},
	{kind: KindWorkload, apiVersions: []string{"batch/v1"}, objectKind: "CronJob", base: []string{"spec", "jobTemplate", "spec", "template"}, podSpec: []string{"spec"},
		runLabel: "batch.kubernetes.io/controller-uid", runEnv: sidecar.EnvRunLabel, detect: workload},
	// Operators: Spark's spark-app-selector is new every run (kubeflow: spark-<uuid>) or
	// attempt (Apache: <name>-<attempt>).
	{kind: KindKubeflow, apiVersions: []string{kubeflowAPIVersion}, objectKind: "SparkApplication", base: []string{"spec"}, podSpec: []string{"driver", "template", "spec"},
		runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID, saField: kubeflowSA, operatorContainer: true, detect: kubeflow,
		operatorServices: kubeflowUIService},
	{kind: KindKubeflow, apiVersions: []string{kubeflowAPIVersion}, objectKind: "ScheduledSparkApplication", base: []string{"spec", "template"}, podSpec: []string{"driver", "template", "spec"},
		runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID, saField: kubeflowSA, operatorContainer: true, detect: kubeflow},
	{kind: KindApache, apiVersions: []string{"spark.apache.org/v1", "spark.apache.org/v1beta1"}, objectKind: "SparkApplication", base: []string{"spec"}, podSpec: []string{"driverSpec", "podTemplateSpec", "spec"},
		runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID, saConf: true, operatorContainer: true, pinContainer: true, detect: apache},
	// kubeflow's SparkConnect (operator v2.3.0+): the operator makes one Pod <name>-server from
	// spec.server.template and runs the driver in it in client mode, as a workload's Pod does
	// (sparkconnect.go). The Pod's name is fixed and only one exists at a time, so no run
	// label is needed; the operator sets spark-role=connect-server over the template's.
	{kind: KindWorkload, apiVersions: []string{connectAPIVersion}, objectKind: "SparkConnect", base: []string{"spec", "server", "template"}, podSpec: []string{"spec"},
		operatorContainer: true, role: connectRole, operatorLifecycle: true, operatorServices: connectServices, detect: connect},
}

// carrierKinds indexes carrierProfiles by apiVersion and kind.
var carrierKinds = func() map[[2]string]*carrierProfile {
	m := map[[2]string]*carrierProfile{}
	for _, p := range carrierProfiles {
		for _, av := range p.apiVersions {
			m[[2]string{av, p.objectKind}] = p
		}
	}
	return m
}()

// SparkOwnsIdentityLabel reports a carrier whose identity label is Spark's own
// spark-app-selector (a spark-submit Pod): sparkui adds it when missing, never replaces or
// removes it.
func (c *Carrier) SparkOwnsIdentityLabel() bool { return c.profile != nil && c.profile.sparkIdentity }

// OperatorFillsContainer reports a carrier whose operator completes a driver container the
// pod template lacks (kubeflow, Apache): Ensure may add one.
func (c *Carrier) OperatorFillsContainer() bool {
	return c.profile != nil && c.profile.operatorContainer
}

// DriverRole is the spark-role label value of the carrier's driver Pod.
func (c *Carrier) DriverRole() string {
	if c == nil || c.profile == nil || c.profile.role == "" {
		return names.RoleDriver
	}
	return c.profile.role
}

// OperatorOwnsLifecycle reports a carrier whose operator replaces the driver container's
// lifecycle (kubeflow SparkConnect): no withdraw hook can be carried into the Pod.
func (c *Carrier) OperatorOwnsLifecycle() bool {
	return c != nil && c.profile != nil && c.profile.operatorLifecycle
}

// OperatorServices are the names of the Services the carrier's operator creates for it at
// run time (none known at build time: empty), each with who makes it and why.
func (c *Carrier) OperatorServices() map[string]string {
	if c == nil || c.profile == nil || c.profile.operatorServices == nil {
		return nil
	}
	return c.profile.operatorServices(c.Object, c.Name)
}

// PinsDriverContainer reports a carrier whose driver container transform names in the conf
// (spark.kubernetes.driver.podTemplateContainerName).
func (c *Carrier) PinsDriverContainer() bool { return c.profile != nil && c.profile.pinContainer }
