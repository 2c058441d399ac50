package app

// Carriers: the input objects a Spark driver is found in. docs/operators.md lists them: a
// spark-submit driver Pod, a workload whose pod template is a driver, a kubeflow
// SparkApplication/ScheduledSparkApplication or SparkConnect and an Apache SparkApplication
// (one adapter each, registered in registry.go). A Carrier
// reads, for one object, what an application needs (Spark conf, ServiceAccount, name,
// namespace, deploy mode, …) and says where the function writes the pod-level additions
// (runtime sidecar, volume, withdraw hook, labels) so that the operator or controller
// really carries them into the driver Pod. Transform and validate work on the model built
// from it and never look at the carrier's own field layout.
//
// app.BuildWith detects every carrier with DetectCarrier and builds an application from it
// (index.go; build.go's buildPod for a spark-submit Pod, whose conf and prefix come from other
// objects of the input, buildCarrier for the rest). docs/operators.md says where
// each carrier's facts come from in the operators' sources.

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Names and keys carriers use (pinned: docs/operators.md, "Names and identity").
const (
	// LabelApplication is the build-time identity label of a non-Pod carrier: the Spark
	// application id is not known before the driver runs (kubeflow's is random per run).
	LabelApplication = names.AnnotationPrefix + "application"
	// CarrierPrefixSuffix makes `<object name>-sparkui`, a prefix no operator uses (the
	// kubeflow operator owns and rewrites `<app>-ui-svc`).
	CarrierPrefixSuffix = "-sparkui"

	KeyIPFamilyPolicy    = "spark.kubernetes.driver.service.ipFamilyPolicy"
	KeyIPFamilies        = "spark.kubernetes.driver.service.ipFamilies"
	KeyDriverSA          = "spark.kubernetes.authenticate.driver.serviceAccountName"
	KeyPodTemplateFile   = "spark.kubernetes.driver.podTemplateFile"
	KeyPodTemplateCtr    = "spark.kubernetes.driver.podTemplateContainerName"
	KeyDriverPodName     = "spark.kubernetes.driver.pod.name"
	HistoryServerClass   = "org.apache.spark.deploy.history.HistoryServer"
	defaultSparkConfDir  = "/opt/spark/conf"
	sparkDefaultsConfKey = "spark-defaults.conf"
)

// Injection says how pod-level additions reach a kubeflow driver Pod (spec.kubeflow.injection).
type Injection int

const (
	// InjectTemplate writes into spec.driver.template (kubeflow v2.1+, Spark ≥ 3): the
	// operator hands it to spark-submit as the driver pod template, no webhook needed.
	InjectTemplate Injection = iota
	// InjectWebhook writes into spec.driver.initContainers, spec.volumes +
	// spec.driver.volumeMounts and spec.driver.lifecycle, which only the operator's mutating
	// webhook applies (kubeflow v1.x and v2.0; the webhook is off by default in v1.x).
	InjectWebhook
)

func (r Injection) String() string {
	if r == InjectWebhook {
		return "webhook"
	}
	return "template"
}

// CarrierOptions is what detection needs from outside the object.
type CarrierOptions struct {
	// KubeflowInjection is where additions go in kubeflow carriers (functionConfig).
	KubeflowInjection Injection
	// SparkConf is the functionConfig's spark properties: the base of a workload's conf.
	SparkConf map[string]string
	// ConfigMap looks up a ConfigMap of the input (nil: none known). Workloads use it to
	// read the spark-defaults.conf mounted into the driver container.
	ConfigMap func(namespace, name string) *yaml.RNode
}

// ShapeError is a carrier field whose YAML shape is not the one its schema has (a
// sparkConf that is a list, a template that is a string, …). It names the object and the
// field in the dotted form results use (internal/fieldpath).
type ShapeError struct {
	APIVersion, Kind, Namespace, Name string
	Field                             string
	Msg                               string
}

func (e *ShapeError) Error() string {
	obj := e.Name
	if e.Namespace != "" {
		obj = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, obj, e.Field, e.Msg)
}

// Carrier is one input object that carries a Spark driver, with what was read from it.
type Carrier struct {
	Kind   CarrierKind
	Object *yaml.RNode
	// APIVersion and ObjectKind are the object's own (e.g. "apps/v1", "StatefulSet").
	APIVersion, ObjectKind string
	Name, Namespace        string
	// Injection is InjectTemplate for every carrier but a kubeflow one configured otherwise.
	Injection Injection

	// Conf is the Spark conf as the driver will see it, as far as the manifests tell:
	// spec.sparkConf for operators; for workloads the functionConfig's sparkConf, overlaid
	// by a spark-defaults.conf mounted from an input ConfigMap, overlaid by the driver
	// container's --conf arguments (spark-submit's own precedence). Empty, never nil.
	Conf map[string]string
	// ConfPath is the field the conf is written at, for results (e.g. "spec.sparkConf").
	// Empty for workloads and Pods.
	ConfPath string
	// ConfFile names the ConfigMap and key a workload's conf was read from, "" if none.
	ConfFile string
	// ConfError is a mounted spark-defaults.conf that could not be parsed (workloads).
	ConfError *ConfError

	// ServiceAccount is what the driver Pod will run as, "" when nothing sets it (then
	// "default"); ServiceAccountPath is the field it came from.
	ServiceAccount, ServiceAccountPath string
	// IPFamilyPolicy and IPFamilies are Spark's spark.kubernetes.driver.service.ipFamil*
	// settings ("" and nil when unset).
	IPFamilyPolicy string
	IPFamilies     []string
	HostNetwork    bool
	// DeployMode is "cluster" or "client" (Spark's words), as the carrier runs the driver.
	DeployMode string
	// MainClass is the application's main class, "" if unknown.
	MainClass string
	// SparkVersion is kubeflow's spec.sparkVersion or Apache's spec.runtimeVersions.sparkVersion.
	SparkVersion string
	// DriverPodName is the driver Pod's name when the manifests fix it, "" otherwise.
	DriverPodName string
	// UserLifecyclePath is kubeflow's spec.driver.lifecycle field path when it is set (by the
	// user, or by sparkui itself on the webhook injection), "" otherwise. The operator's webhook, whenever it is installed, replaces the Spark
	// container's whole lifecycle with it, on the template injection too: a preStop hook in
	// the template is then lost.
	UserLifecyclePath string

	// Replicas is how many driver Pods the carrier runs at once (Deployment/StatefulSet
	// spec.replicas, Job spec.parallelism; 1 when unset); ReplicasPath is its field.
	Replicas     int
	ReplicasPath string
	// Strategy is a Deployment's spec.strategy.type (RollingUpdate when unset); "" otherwise.
	Strategy string
	// ConcurrencyPolicy is a CronJob's (Allow when unset) or ScheduledSparkApplication's
	// (kept as written: the operator has no default) spec.concurrencyPolicy.
	ConcurrencyPolicy string
	// Overlap is the field that lets a new driver Pod start while the last still runs (a
	// Deployment's RollingUpdate, a concurrencyPolicy Allow) and why, nil when runs never
	// overlap (SUI036).
	Overlap *CarrierNote

	// MainClassPath and SparkVersionPath are the fields MainClass and SparkVersion were read
	// from (a workload's: its driver container), for results.
	MainClassPath, SparkVersionPath string

	// base is the path of the part that holds the driver: the SparkApplicationSpec
	// ("spec", "spec.template" for a ScheduledSparkApplication) or a workload's pod
	// template ("spec.template", "spec.jobTemplate.spec.template"); "" for a Pod.
	base []string
	// profile is the adapter the object matched (registry.go).
	profile *Adapter
}

// CarrierNote is a field of a carrier and what it does, for a rule's finding.
type CarrierNote struct {
	Field, Msg string
}

// DetectCarrier reports whether rn carries a Spark driver: nil, nil when it does not; an
// error (a *ShapeError) when it is a carrier kind whose fields have the wrong shape.
func DetectCarrier(rn *yaml.RNode, opts CarrierOptions) (*Carrier, error) {
	if rn == nil || rn.YNode() == nil || rn.YNode().Kind != yaml.MappingNode || Ignored(rn) {
		return nil, nil
	}
	av, kind := kindOf(rn)
	p := carrierKinds[[2]string{av, kind}]
	if p == nil {
		return nil, nil
	}
	c := &Carrier{Kind: p.kind, profile: p, base: p.base, Object: rn, APIVersion: av, ObjectKind: kind, Replicas: 1, Conf: map[string]string{}}
	c.Namespace, c.Name = Meta(rn)
	ok, err := p.detect(c, opts)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	if c.Name == "" {
		return nil, c.shapeErr("metadata.name", "is empty: the application cannot be named")
	}
	if err := c.CheckSlots(); err != nil {
		return nil, err
	}
	return c, nil
}

// IdentityLabels are the labels sparkui puts on what it adds for this application and on
// the driver Pod (docs/operators.md, "Names and identity"): spark-app-selector for a spark-submit Pod, the build-time
// application label for every other carrier. A Pod without the label gets "" here: Build
// derives its app id from the conf (app.go).
func (c *Carrier) IdentityLabels() map[string]string {
	if c.SparkOwnsIdentityLabel() {
		return map[string]string{names.LabelAppSelector: yamlx.GetStr(c.Object.YNode(), "metadata", "labels", names.LabelAppSelector)}
	}
	return map[string]string{LabelApplication: c.IdentityValue()}
}

// IdentityValue is the value of a non-Pod carrier's identity label (LabelApplication): its
// name, shortened deterministically when that is no valid label value (over 63 characters):
// the label on the driver Pod, on sparkui's objects and the runtime's guard all use it.
func (c *Carrier) IdentityValue() string { return names.LabelValue(c.Name) }

// Prefix is the name sparkui's objects are derived from (docs/operators.md, "Names and identity"): `<object name>-sparkui`
// for every carrier but a spark-submit Pod, whose prefix is its driver Service's name
// without -driver-svc (Build knows the Services) or the Pod's name without -driver.
func (c *Carrier) Prefix() string {
	if c.Has(CapSubmitOutput) {
		return names.Prefix("", c.Name)
	}
	return c.Name + CarrierPrefixSuffix
}

// Settings derives Spark's UI settings from Conf (defaults and inheritance applied).
func (c *Carrier) Settings() (sparkconf.Settings, []*sparkconf.SettingError) {
	return sparkconf.Derive(c.Conf)
}

// IsHistoryServer reports a Spark History Server run as an application: it answers the
// REST API for many applications and is no driver's UI.
func (c *Carrier) IsHistoryServer() bool { return c.MainClass == HistoryServerClass }
