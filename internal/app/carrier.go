package app

// Carriers: the input objects a Spark driver is found in. Design §3 lists them: a
// spark-submit driver Pod, a workload whose pod template is a driver, a kubeflow
// SparkApplication/ScheduledSparkApplication and an Apache SparkApplication. A Carrier
// reads, for one object, what an application needs (Spark conf, ServiceAccount, name,
// namespace, deploy mode, …) and says where the function writes the pod-level additions
// (runtime sidecar, volume, withdraw hook, labels) so that the operator or controller
// really carries them into the driver Pod. Transform and validate work on the model built
// from it and never look at the carrier's own field layout.
//
// app.BuildWith builds an application from every carrier (index.go, build.go's
// buildCarrier; spark-submit Pods keep their own path there). docs/operators.md says where
// each carrier's facts come from in the operators' sources.

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Names and keys carriers use (design §2 "Names" pins the label and the prefix suffix).
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

// CarrierKind is the sort of object a driver is found in.
type CarrierKind int

const (
	// KindPod is a spark-submit driver Pod (v1 Pod labelled spark-role=driver).
	KindPod CarrierKind = iota + 1
	// KindWorkload is a Deployment, StatefulSet, Job or CronJob whose pod template is
	// labelled spark-role=driver: client-mode notebooks, Spark Connect servers,
	// driver-only Jobs.
	KindWorkload
	// KindKubeflow is a sparkoperator.k8s.io/v1beta2 SparkApplication or
	// ScheduledSparkApplication.
	KindKubeflow
	// KindApache is a spark.apache.org/v1 or v1beta1 SparkApplication.
	KindApache
)

func (k CarrierKind) String() string {
	switch k {
	case KindPod:
		return "Pod"
	case KindWorkload:
		return "workload"
	case KindKubeflow:
		return "kubeflow"
	case KindApache:
		return "apache"
	}
	return "unknown"
}

// Route says how pod-level additions reach a kubeflow driver Pod.
type Route int

const (
	// RouteTemplate writes into spec.driver.template (kubeflow v2.1+, Spark ≥ 3): the
	// operator hands it to spark-submit as the driver pod template, no webhook needed.
	RouteTemplate Route = iota
	// RouteWebhook writes into spec.driver.initContainers, spec.volumes +
	// spec.driver.volumeMounts and spec.driver.lifecycle, which only the operator's mutating
	// webhook applies (kubeflow v1.x and v2.0; the webhook is off by default in v1.x).
	RouteWebhook
)

func (r Route) String() string {
	if r == RouteWebhook {
		return "webhook"
	}
	return "template"
}

// CarrierOptions is what detection needs from outside the object.
type CarrierOptions struct {
	// KubeflowRoute is the route for kubeflow carriers (functionConfig).
	KubeflowRoute Route
	// SparkConf is the functionConfig's spark properties: the base of a workload's conf.
	SparkConf map[string]string
	// ConfigMap looks up a ConfigMap of the input (nil: none known). Workloads use it to
	// read the spark-defaults.conf mounted into the driver container.
	ConfigMap func(namespace, name string) *yaml.RNode
}

// ShapeError is a carrier field whose YAML shape is not the one its schema has (a
// sparkConf that is a list, a template that is a string, …). It names the object and the
// field in design §4's dotted form.
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
	// Route is RouteTemplate for every carrier but a kubeflow one configured otherwise.
	Route Route

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
	// user, or by sparkui itself on the webhook route), "" otherwise. The operator's webhook, whenever it is installed, replaces the Spark
	// container's whole lifecycle with it, on the template route too: a preStop hook in
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

	// base is the path of the part that holds the driver: the SparkApplicationSpec
	// ("spec", "spec.template" for a ScheduledSparkApplication) or a workload's pod
	// template ("spec.template", "spec.jobTemplate.spec.template"); "" for a Pod.
	base []string
}

// DetectCarrier reports whether rn carries a Spark driver: nil, nil when it does not; an
// error (a *ShapeError) when it is a carrier kind whose fields have the wrong shape.
func DetectCarrier(rn *yaml.RNode, opts CarrierOptions) (*Carrier, error) {
	if rn == nil || rn.YNode() == nil || rn.YNode().Kind != yaml.MappingNode || Ignored(rn) {
		return nil, nil
	}
	av, kind := kindOf(rn)
	c := &Carrier{Object: rn, APIVersion: av, ObjectKind: kind, Replicas: 1, Conf: map[string]string{}}
	c.Namespace, c.Name = Meta(rn)
	var ok bool
	var err error
	switch {
	case av == "v1" && kind == "Pod":
		ok, err = c.detectPod()
	case av == "apps/v1" && (kind == "Deployment" || kind == "StatefulSet"),
		av == "batch/v1" && (kind == "Job" || kind == "CronJob"):
		ok, err = c.detectWorkload(opts)
	case av == kubeflowAPIVersion && (kind == "SparkApplication" || kind == "ScheduledSparkApplication"):
		ok, err = true, c.detectKubeflow(opts)
	case (av == "spark.apache.org/v1" || av == "spark.apache.org/v1beta1") && kind == "SparkApplication":
		ok, err = true, c.detectApache()
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	if c.Name == "" {
		return nil, c.shapeErr("metadata.name", "is empty: the application cannot be named")
	}
	return c, nil
}

// IdentityLabels are the labels sparkui puts on what it adds for this application and on
// the driver Pod (design §2): spark-app-selector for a spark-submit Pod, the build-time
// application label for every other carrier. A Pod without the label gets "" here: Build
// derives its app id from the conf (app.go).
func (c *Carrier) IdentityLabels() map[string]string {
	if c.Kind == KindPod {
		return map[string]string{names.LabelAppSelector: yamlx.GetStr(c.Object.YNode(), "metadata", "labels", names.LabelAppSelector)}
	}
	return map[string]string{LabelApplication: c.Name}
}

// Prefix is the name sparkui's objects are derived from (design §2): `<object name>-sparkui`
// for every carrier but a spark-submit Pod, whose prefix is its driver Service's name
// without -driver-svc (Build knows the Services) or the Pod's name without -driver.
func (c *Carrier) Prefix() string {
	if c.Kind == KindPod {
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

// Slot is a place in the carrier where a pod-level addition goes.
type Slot int

const (
	// SlotPodSpec is the driver's pod spec (hostNetwork, serviceAccountName, …). The webhook
	// route has none to write to.
	SlotPodSpec Slot = iota
	// SlotInitContainers is the sequence the runtime sidecar is appended to.
	SlotInitContainers
	// SlotVolumes is the sequence of pod volumes. On the kubeflow webhook route the
	// webhook adds a volume only if the driver mounts it (SlotDriverContainer's
	// volumeMounts): a volume used only by the sidecar is never added.
	SlotVolumes
	// SlotDriverContainer is the driver container's mapping (its lifecycle and
	// volumeMounts). On the kubeflow webhook route it is spec.driver, whose lifecycle
	// replaces the Spark container's whole lifecycle.
	SlotDriverContainer
	// SlotPodLabels is the driver Pod's metadata.labels (kubeflow webhook route:
	// spec.driver.labels, which the operator turns into spark.kubernetes.driver.label.*).
	SlotPodLabels
)

// Lookup returns the node of a slot and its field path, nil when absent (the path is then
// where Ensure would put it); an error when a field on the way has the wrong shape.
func (c *Carrier) Lookup(s Slot) (*yaml.Node, string, error) { return c.slot(s, false) }

// Ensure returns the node of a slot and its field path, creating what is missing on the way
// (a kubeflow driver template, an Apache podTemplateSpec, a driver container where the
// operator supplies it).
func (c *Carrier) Ensure(s Slot) (*yaml.Node, string, error) { return c.slot(s, true) }

// PathPrefix is the field path of the driver's pod spec for results, e.g.
// "spec.driver.template.spec" (field paths of additions are this + ".initContainers[0]"),
// or of spec.driver on the kubeflow webhook route.
func (c *Carrier) PathPrefix() string {
	if c.Kind == KindKubeflow && c.Route == RouteWebhook {
		return joinPath(cat(c.base, "driver")...)
	}
	return joinPath(c.podSpecPath()...)
}

func (c *Carrier) slot(s Slot, create bool) (*yaml.Node, string, error) {
	if c.Kind == KindKubeflow && c.Route == RouteWebhook {
		return c.webhookSlot(s, create)
	}
	switch s {
	case SlotPodSpec:
		return c.walk(create, c.podSpecPath()...)
	case SlotInitContainers:
		return c.walkSeq(create, append(c.podSpecPath(), "initContainers")...)
	case SlotVolumes:
		return c.walkSeq(create, append(c.podSpecPath(), "volumes")...)
	case SlotPodLabels:
		return c.walk(create, append(c.podMetaPath(), "labels")...)
	case SlotDriverContainer:
		return c.driverContainer(create)
	}
	return nil, "", fmt.Errorf("app: unknown slot %d", s)
}

// podSpecPath is the path of the driver's pod spec.
func (c *Carrier) podSpecPath() []string {
	switch c.Kind {
	case KindKubeflow:
		return cat(c.base, "driver", "template", "spec")
	case KindApache:
		return cat(c.base, "driverSpec", "podTemplateSpec", "spec")
	case KindWorkload:
		return cat(c.base, "spec")
	}
	return []string{"spec"}
}

func (c *Carrier) podMetaPath() []string {
	p := c.podSpecPath()
	return append(p[:len(p)-1:len(p)-1], "metadata")
}

// driverContainer finds the container Spark (or the workload) runs the driver in: the one
// named by the carrier's container name, else the first (Spark's
// KubernetesUtils.selectSparkContainer falls back to the first container). With create and
// no container in an operator's template, it adds one named spark-kubernetes-driver, which
// the operator fills in (kubeflow's buildDriverPodTemplate default template has exactly
// that container; Spark keeps a template container's lifecycle).
func (c *Carrier) driverContainer(create bool) (*yaml.Node, string, error) {
	specPath := c.podSpecPath()
	cs, path, err := c.walkSeq(false, append(specPath, "containers")...)
	if err != nil {
		return nil, "", err
	}
	want := c.driverContainerName()
	items := yamlx.Items(cs)
	for i, ctr := range items {
		if ctr.Kind != yaml.MappingNode {
			return nil, "", c.shapeErr(indexPath(path, i), "is not a mapping")
		}
		if yamlx.GetStr(ctr, "name") == want {
			return ctr, indexPath(path, i), nil
		}
	}
	if len(items) > 0 {
		return items[0], indexPath(path, 0), nil
	}
	if !create {
		return nil, indexPath(path, 0), nil
	}
	if c.Kind == KindWorkload || c.Kind == KindPod {
		// The workload or Pod runs nothing without a container: inventing one would
		// invent the driver.
		return nil, "", c.shapeErr(path, "has no container to run the driver in")
	}
	cs, path, err = c.walkSeq(true, append(specPath, "containers")...)
	if err != nil {
		return nil, "", err
	}
	ctr := yamlx.NewMap("name", names.DriverContainer)
	cs.Content = append(cs.Content, ctr)
	return ctr, indexPath(path, 0), nil
}

// driverContainerName is the container name the carrier's driver is matched by.
func (c *Carrier) driverContainerName() string {
	if c.Kind == KindApache {
		// The Apache operator does not set podTemplateContainerName; a user's, in
		// sparkConf, is what Spark and the operator's ModelUtils both read.
		if n := c.Conf[KeyPodTemplateCtr]; n != "" {
			return n
		}
	}
	// kubeflow always passes podTemplateContainerName=spark-kubernetes-driver
	// (submission.go driverPodTemplateOption); for workloads and Pods it is Spark's default.
	return names.DriverContainer
}

// walk follows keys from the object's root. A missing step (or an explicit null) gives nil,
// or with create a new empty mapping; a step that exists with another shape is a
// ShapeError naming it.
func (c *Carrier) walk(create bool, keys ...string) (*yaml.Node, string, error) {
	n := c.Object.YNode()
	for i, k := range keys {
		next := yamlx.Get(n, k)
		if isNull(next) {
			if !create {
				return nil, joinPath(keys...), nil
			}
			next = yamlx.NewMap()
			yamlx.Set(n, k, next)
		} else if next.Kind != yaml.MappingNode {
			return nil, "", c.shapeErr(joinPath(keys[:i+1]...), "is "+shapeName(next)+", want a mapping")
		}
		n = next
	}
	return n, joinPath(keys...), nil
}

// walkSeq is walk whose last step is a sequence.
func (c *Carrier) walkSeq(create bool, keys ...string) (*yaml.Node, string, error) {
	parent, _, err := c.walk(create, keys[:len(keys)-1]...)
	path := joinPath(keys...)
	if err != nil || parent == nil {
		return nil, path, err
	}
	last := keys[len(keys)-1]
	s := yamlx.Get(parent, last)
	if isNull(s) {
		if !create {
			return nil, path, nil
		}
		s = yamlx.NewSeq()
		yamlx.Set(parent, last, s)
	} else if s.Kind != yaml.SequenceNode {
		return nil, "", c.shapeErr(path, "is "+shapeName(s)+", want a list")
	}
	return s, path, nil
}

// readStringMap reads a map of strings (sparkConf, labels): absent is empty; a non-mapping
// or a non-scalar value is a ShapeError.
func (c *Carrier) readStringMap(keys ...string) (map[string]string, error) {
	n, path, err := c.walk(false, keys...)
	if err != nil || n == nil {
		return map[string]string{}, err
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, c.shapeErr(path, "has a key that is not a string")
		}
		if v.Kind != yaml.ScalarNode {
			return nil, c.shapeErr(fmt.Sprintf("%s[%q]", path, k.Value), "is "+shapeName(v)+", want a string")
		}
		m[k.Value] = v.Value
	}
	return m, nil
}

// readScalar reads a scalar field ("" when absent); another shape is a ShapeError.
func (c *Carrier) readScalar(keys ...string) (string, error) {
	parent, _, err := c.walk(false, keys[:len(keys)-1]...)
	if err != nil || parent == nil {
		return "", err
	}
	v := yamlx.Get(parent, keys[len(keys)-1])
	if isNull(v) {
		return "", nil
	}
	if v.Kind != yaml.ScalarNode {
		return "", c.shapeErr(joinPath(keys...), "is "+shapeName(v)+", want a scalar")
	}
	return v.Value, nil
}

// readInt reads an integer field; def when absent.
func (c *Carrier) readInt(def int, keys ...string) (int, error) {
	s, err := c.readScalar(keys...)
	if err != nil || s == "" {
		return def, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, c.shapeErr(joinPath(keys...), fmt.Sprintf("is %q, want an integer", s))
	}
	return n, nil
}

// readBool reads a boolean field; false when absent.
func (c *Carrier) readBool(keys ...string) (bool, error) {
	s, err := c.readScalar(keys...)
	if err != nil || s == "" {
		return false, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, c.shapeErr(joinPath(keys...), fmt.Sprintf("is %q, want true or false", s))
}

// readPodSpecFacts reads what every pod-template carrier shares: ServiceAccount and
// hostNetwork from the pod spec, after checking the containers' shape.
func (c *Carrier) readPodSpecFacts() (sa, saPath string, hostNetwork bool, err error) {
	if _, _, err := c.walk(false, append(c.podMetaPath(), "labels")...); err != nil {
		return "", "", false, err
	}
	spec, specPath, err := c.walk(false, c.podSpecPath()...)
	if err != nil || spec == nil {
		return "", "", false, err
	}
	p := c.podSpecPath()
	for _, list := range []string{"containers", "initContainers", "volumes"} {
		if _, _, err := c.walkSeq(false, append(p, list)...); err != nil {
			return "", "", false, err
		}
	}
	if hostNetwork, err = c.readBool(append(p, "hostNetwork")...); err != nil {
		return "", "", false, err
	}
	for _, k := range []string{"serviceAccountName", "serviceAccount"} {
		v, err := c.readScalar(append(p, k)...)
		if err != nil {
			return "", "", false, err
		}
		if v != "" {
			return v, specPath + "." + k, hostNetwork, nil
		}
	}
	return "", "", hostNetwork, nil
}

// readIPFamilies reads Spark's IP family settings from Conf. Spark splits ipFamilies on
// commas (KubernetesConf's KUBERNETES_DRIVER_SERVICE_IP_FAMILIES is a toSequence conf).
func (c *Carrier) readIPFamilies() {
	c.IPFamilyPolicy = strings.TrimSpace(c.Conf[KeyIPFamilyPolicy])
	c.IPFamilies = nil
	for _, f := range strings.Split(c.Conf[KeyIPFamilies], ",") {
		if f = strings.TrimSpace(f); f != "" {
			c.IPFamilies = append(c.IPFamilies, f)
		}
	}
}

func (c *Carrier) shapeErr(field, msg string) *ShapeError {
	return &ShapeError{APIVersion: c.APIVersion, Kind: c.ObjectKind, Namespace: c.Namespace, Name: c.Name, Field: field, Msg: msg}
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull)
}

func shapeName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "not a value"
}

func joinPath(keys ...string) string { return strings.Join(keys, ".") }

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// cat copies base and appends more, so callers never share a backing array.
func cat(base []string, more ...string) []string {
	out := make([]string, 0, len(base)+len(more))
	return append(append(out, base...), more...)
}
