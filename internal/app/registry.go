package app

import (
	"maps"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
)

// The carrier registry: every sort of object a Spark driver is found in, one Adapter each,
// listed once in Adapters below. An adapter lives in its own file (e.g. pod.go, workload.go,
// kubeflow.go, sparkconnect.go, apache.go) and owns everything sparkui knows of
// its carrier: the API versions it reads (and so the ones it recognises but does not read:
// SUI050), how it detects and reads the object, every field path it writes (its slots), the
// Services and names its operator makes, and its capabilities. Transform and validate never
// test which carrier they look at: they ask the carrier for a capability or a fact, and a
// rule that only concerns some carriers scopes itself by one (docs/how-it-works.md, "Adding a
// carrier").

// CarrierKind is the family of carriers an adapter belongs to ("Pod", "workload",
// "kubeflow", "apache", …): a name for tests and messages; no code outside the
// adapters branches on it.
type CarrierKind string

func (k CarrierKind) String() string {
	if k == "" {
		return "unknown"
	}
	return string(k)
}

// Capability is something a carrier's operator or controller does, or lets sparkui do, that
// rules and transform steps scope themselves by.
type Capability uint32

const (
	// CapSubmitOutput: the object is spark-submit's own output, the driver Pod itself: its
	// conf lives in a ConfigMap of the input, its driver Service beside it, and its identity
	// label is Spark's spark-app-selector (which sparkui fills in when missing and never
	// removes); sparkui's objects are named after the driver Service.
	CapSubmitOutput Capability = 1 << iota
	// CapOperatorContainer: the operator completes a driver container the pod template
	// lacks, so sparkui may add one named after the operator's driver container; a Pod or
	// workload without one runs no driver.
	CapOperatorContainer
	// CapPinContainer: transform pins the driver container's name in the conf
	// (spark.kubernetes.driver.podTemplateContainerName): the Apache operator watches every
	// container as a main one unless the conf names the driver's.
	CapPinContainer
	// CapOperatorLifecycle: the operator replaces the driver container's whole lifecycle, so
	// a preStop hook sparkui writes there never reaches the Pod; sparkui writes nothing into
	// that container and the runtime withdraws on SIGTERM (a native sidecar gets it only
	// after the driver container has exited) or as soon as the UI goes away.
	CapOperatorLifecycle
	// CapConfAppID: the carrier's Pod runs the driver itself (client or driver-only mode),
	// so a spark.app.id in its conf is the application's id.
	CapConfAppID
	// CapSparkSubmitsFromConf: an operator submits the application with Spark's own
	// Kubernetes builder from the resource's spec.sparkConf, so the driver Pod declares the
	// UI containerPort from spark.ui.port (0 is refused by the API server: SUI031).
	CapSparkSubmitsFromConf
	// CapCustomResource: the carrier is an operator's custom resource, whose other versions
	// sparkui recognises but does not read (SUI050).
	CapCustomResource
)

// Adapter is one sort of carrier object. Its fields are unexported: a carrier is read only
// through Carrier's methods, so what an adapter declares is the only way it differs.
type Adapter struct {
	kind CarrierKind
	// group, versions and objectKind are the objects the adapter reads; resource is their
	// plural (admission policies).
	group      string
	versions   []string
	objectKind string
	resource   string
	caps       Capability
	// base is the path of the part that holds the driver (the SparkApplicationSpec, a
	// workload's pod template); podSpec is the driver's pod spec under it.
	base, podSpec []string
	// runLabel is the label only one run's driver Pod carries, runEnv the env var the runtime
	// reads its value from (App.RunLabel); "" for a spark-submit Pod, whose app id is known.
	runLabel, runEnv string
	// saField is the field that would set the driver's ServiceAccount when none is set, under
	// base; nil is the pod spec's serviceAccountName. saConf: it is that key of the conf.
	saField []string
	saConf  bool
	// role is the spark-role label value the driver Pod ends up with, "" for Spark's own
	// "driver": the runtime's bind selector names it, so it must be what the Pod really
	// carries, whatever the template says.
	role string
	// container is the name of the container the driver runs in (names.DriverContainer when
	// ""); containerFromConf: the conf's spark.kubernetes.driver.podTemplateContainerName,
	// when set, names it instead (Spark and the operator both read it).
	container         string
	containerFromConf bool
	// operatorServices names the Services the operator creates for the object at run time,
	// each with who makes it and why (internal/names/operators.go): no UI Service may take
	// one, as the operator would overwrite it. nil: none.
	operatorServices func(obj *yaml.RNode, name string) map[string]string
	// webhookSlot resolves the slots on a webhook injection (kubeflow's spec.driver fields,
	// which the operator's mutating webhook copies into the driver Pod); nil: the carrier has
	// none, every slot is in its pod template.
	webhookSlot func(c *Carrier, s Slot, create bool) (*yaml.Node, string, error)
	// replicas is the field that runs several driver Pods at once (a workload's replicas or
	// parallelism, 1 when unset), nil when the carrier has none: detect reads it, and it is
	// what SUI035's policy bounds.
	replicas []string
	// admission is what a ValidatingAdmissionPolicy knows of the resource, nil when no policy
	// looks at it.
	admission *Admission
	// notes are what the operator does that some rules tell the user, by the rule's id.
	notes map[string]string
	// fields are the operator's own fields some rules read, by name (Field…), under base.
	fields map[string][]string
	// operatorUI says which Services of its own the operator aims at a port that is not the
	// one the UI bound (SUI032), given sparkui's UI Service name and how to name it in advice.
	operatorUI func(c *Carrier, uiService, ours string) []string
	// schemaNeed is the field of the carrier's CRD schema the additions need kept (the API
	// server prunes what the schema lacks), given the runtime's index among the init
	// containers; nil: no such field (SUI042).
	schemaNeed func(c *Carrier, runtime int) *SchemaNeed
	// onUpdate is what applying a change of the object does to its running application, read
	// in its controller's source (update.go); nil: assumed to restart it.
	onUpdate func(c *Carrier, changed []string) Update
	// detect reads the object; false when it is not a driver after all (a workload whose pod
	// template is no driver's).
	detect func(c *Carrier, opts CarrierOptions) (bool, error)
}

// Adapters is the registry: one adapter per carrier object kind, in the order detection
// tries them. A new carrier is its adapter file plus one line here.
var Adapters = []*Adapter{
	podAdapter,
	deploymentAdapter, statefulSetAdapter, jobAdapter, cronJobAdapter,
	kubeflowAdapter, scheduledAdapter,
	apacheAdapter,
	sparkConnectAdapter,
	stackableAdapter,
}

// Names of operator fields (Carrier.FieldPath).
const (
	// FieldIngressOptions: entries each of which makes the operator create a Service and an
	// Ingress to the declared UI port (kubeflow driverIngressOptions).
	FieldIngressOptions = "ingressOptions"
	// FieldDeployMode is the resource's deploy mode field, where the operator refuses or
	// misplaces a mode (SUI037).
	FieldDeployMode = "deployMode"
	// FieldServiceIngressList and FieldHTTPRouteList: entries from which the operator builds a
	// Service and an Ingress or HTTPRoute to the driver (Apache driverServiceIngressList,
	// driverHttpRouteList).
	FieldServiceIngressList = "serviceIngressList"
	FieldHTTPRouteList      = "httpRouteList"
	// FieldHostNetwork: a boolean of the operator's own that puts the driver on the host
	// network besides the pod spec's hostNetwork (kubeflow's driver.hostNetwork, which its
	// webhook applies: sparkpod_defaulter.go addHostNetwork).
	FieldHostNetwork = "hostNetwork"
)

// SchemaNeed is a field a carrier's CRD schema must keep for sparkui's additions to reach
// the driver Pod: Path (under the resource, "[]" steps into a list's items) and Field (the
// result's path), the minimum version that keeps it and the effect when pruned.
type SchemaNeed struct {
	Path               []string
	Field, Min, Effect string
}

// Admission is what the admission policies (validate's, `sparkui-fn policy`) know of an
// adapter's resource: CEL paths into the object an admission request carries, and how to tell
// one that carries a driver. A path left "" is a policy the carrier does not get.
type Admission struct {
	// Name tells one rule's policies apart (sparkui-<rule id>-<Name>). Family, when set, names
	// the one policy shared with the other adapters of the same API group and family whose
	// policy would be the same (a policy has one resourceRule: Deployment and StatefulSet).
	Name, Family string
	// Labels (the objectSelector's matchLabels) and Driver (a matchCondition, CEL) say that the
	// object carries a driver where its kind does not: a Pod by its labels, a workload by its
	// pod template's (detectWorkload), which labels cannot select.
	Labels map[string]string
	Driver string
	// Spec is the CEL path of the part that holds sparkConf (the SparkApplicationSpec), and
	// Guard a CEL condition followed by " || ", true when that part is absent ("" when it is
	// required).
	Spec, Guard string
	// PodSpec is the CEL path of the driver's pod spec. PodRequired is the part of it the
	// schema requires ("" all of it: a Pod's, a workload's): an object without the rest has no
	// driver pod spec to judge. PodOpen is the part of it that is an open object
	// (x-kubernetes-preserve-unknown-fields, no properties: an operator's pod template), ""
	// none: the API server's type checker knows no field under it, so a policy reads those
	// through dyn() (AdmissionTarget's PodSpec and PodGuard).
	PodSpec, PodRequired, PodOpen string
	// ClientMode is the value of the deploy mode field (FieldDeployMode) that asks for client
	// mode, where a note (SUI037) says the operator refuses it.
	ClientMode string
	// Overlap is the field that lets two runs' drivers overlap (SUI036).
	Overlap *AdmissionOverlap
}

// AdmissionOverlap is a field (a CEL path) whose value Overlaps lets a new driver start while
// the last one still runs. Defaulted: the API server sets an unset one to Overlaps before
// admission, so a policy takes unset as Overlaps; otherwise unset means no overlap.
type AdmissionOverlap struct {
	Field, Overlaps string
	Defaulted       bool
}

// AdmissionTarget is one adapter's resource rule and what its policies know of it: Admission
// as the adapter declares it, but for PodSpec, the CEL that reads the driver's pod spec, and
// PodGuard, like Guard a CEL condition followed by " || ", true when the pod spec is absent
// ("" when the schema requires it); Replicas, DeployMode and HostNetwork (CEL paths, "" when
// none) from its fields.
type AdmissionTarget struct {
	Group, Resource string
	Versions        []string
	Admission
	PodGuard                          string
	Replicas, DeployMode, HostNetwork string
}

// AdmissionTargets are the adapters that declare an admission, have capability cap (any when
// 0) and, when note is not "", a note for that rule id, in registry order.
func AdmissionTargets(cap Capability, note string) []AdmissionTarget {
	var out []AdmissionTarget
	for _, a := range Adapters {
		if a.admission == nil || a.caps&cap != cap || (note != "" && a.notes[note] == "") {
			continue
		}
		t := AdmissionTarget{Group: a.group, Resource: a.resource, Versions: append([]string(nil), a.versions...), Admission: *a.admission}
		t.Labels = maps.Clone(t.Labels)
		t.PodSpec, t.PodGuard = celPodSpec(a.admission)
		if a.replicas != nil {
			t.Replicas = celPath(a.replicas)
		}
		if f := a.fields[FieldDeployMode]; f != nil {
			t.DeployMode = celPath(cat(a.base, f...))
		}
		if f := a.fields[FieldHostNetwork]; f != nil {
			t.HostNetwork = celPath(cat(a.base, f...))
		}
		out = append(out, t)
	}
	return out
}

// celPath is the CEL path of the object's field at path.
func celPath(path []string) string { return "object." + strings.Join(path, ".") }

// celPodSpec is the CEL of ad's pod spec and its guard: each step below PodRequired tested
// on its own (CEL refuses a field of an absent object), and what is under PodOpen read
// through dyn().
func celPodSpec(ad *Admission) (spec, guard string) {
	if ad.PodSpec == "" {
		return "", ""
	}
	read := func(p string) string {
		if ad.PodOpen != "" && strings.HasPrefix(p, ad.PodOpen+".") {
			return "dyn(" + ad.PodOpen + ")" + strings.TrimPrefix(p, ad.PodOpen)
		}
		return p
	}
	if ad.PodRequired != "" {
		var b strings.Builder
		steps := strings.Split(ad.PodSpec, ".")
		for i := strings.Count(ad.PodRequired, ".") + 2; i <= len(steps); i++ {
			b.WriteString("!has(" + read(strings.Join(steps[:i], ".")) + ") || ")
		}
		guard = b.String()
	}
	return read(ad.PodSpec), guard
}

// carrierKinds indexes Adapters by apiVersion and kind.
var carrierKinds = func() map[[2]string]*Adapter {
	m := map[[2]string]*Adapter{}
	for _, p := range Adapters {
		for _, v := range p.versions {
			m[[2]string{apiVersion(p.group, v), p.objectKind}] = p
		}
	}
	return m
}()

func apiVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// UnreadVersion reports a custom resource of a group and kind an adapter reads, at a version
// none reads: it passes through untouched (SUI050). read are the versions read, in registry
// order.
func UnreadVersion(av, kind string) (group string, read []string, unread bool) {
	group, version, ok := strings.Cut(av, "/")
	if !ok {
		return "", nil, false
	}
	for _, a := range Adapters {
		if a.caps&CapCustomResource == 0 || a.group != group || a.objectKind != kind {
			continue
		}
		read = append(read, a.versions...)
	}
	for _, v := range read {
		if v == version {
			return group, read, false
		}
	}
	return group, read, len(read) > 0
}

// ReadVersions lists the custom resources sparkui reads, by group, for documentation: e.g.
// "spark.apache.org: SparkApplication v1, v1beta1", in registry order.
func ReadVersions() []string {
	var groups []string
	kinds := map[string][]string{}
	for _, a := range Adapters {
		if a.caps&CapCustomResource == 0 {
			continue
		}
		if kinds[a.group] == nil {
			groups = append(groups, a.group)
		}
		kinds[a.group] = append(kinds[a.group], a.objectKind+" "+strings.Join(a.versions, ", "))
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		out = append(out, g+": "+strings.Join(kinds[g], "; "))
	}
	return out
}

// Has reports whether the carrier has capability cap.
func (c *Carrier) Has(cap Capability) bool {
	return c != nil && c.profile != nil && c.profile.caps&cap != 0
}

// SparkOwnsIdentityLabel reports a carrier whose identity label is Spark's own
// spark-app-selector (a spark-submit Pod): sparkui adds it when missing, never replaces or
// removes it.
func (c *Carrier) SparkOwnsIdentityLabel() bool { return c.Has(CapSubmitOutput) }

// OperatorFillsContainer reports a carrier whose operator completes a driver container the
// pod template lacks (the operators' carriers): Ensure may add one.
func (c *Carrier) OperatorFillsContainer() bool { return c.Has(CapOperatorContainer) }

// DriverRole is the spark-role label value of the carrier's driver Pod.
func (c *Carrier) DriverRole() string {
	if c == nil || c.profile == nil || c.profile.role == "" {
		return names.RoleDriver
	}
	return c.profile.role
}

// OperatorOwnsLifecycle reports a carrier whose operator replaces the driver container's
// lifecycle (kubeflow SparkConnect): no withdraw hook can be carried into the Pod.
func (c *Carrier) OperatorOwnsLifecycle() bool { return c.Has(CapOperatorLifecycle) }

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
func (c *Carrier) PinsDriverContainer() bool { return c.Has(CapPinContainer) }

// ViaWebhook reports a carrier whose pod-level additions go through its operator's mutating
// webhook (kubeflow's webhook injection): its slots are the fields the webhook copies into the
// driver Pod, and it has no pod spec.
func (c *Carrier) ViaWebhook() bool {
	return c != nil && c.profile != nil && c.profile.webhookSlot != nil && c.Injection == InjectWebhook
}

// HasInjections reports a carrier whose operator takes the additions either way (a pod
// template or a mutating webhook): OtherInjection reads it on the one not in use.
func (c *Carrier) HasInjections() bool {
	return c != nil && c.profile != nil && c.profile.webhookSlot != nil
}

// Note is what the carrier's operator does that rule id tells the user, "" when nothing.
func (c *Carrier) Note(id string) string {
	if c == nil || c.profile == nil {
		return ""
	}
	return c.profile.notes[id]
}

// FieldPath is the path of the operator field name (Field…) in this carrier, nil when its
// operator has none.
func (c *Carrier) FieldPath(name string) []string {
	if c == nil || c.profile == nil || c.profile.fields[name] == nil {
		return nil
	}
	return cat(c.base, c.profile.fields[name]...)
}

// OperatorUIServices are warnings about the Services the operator aims at a port that is not
// the one the UI bound (SUI032): uiService is sparkui's UI Service name, ours how advice names
// it.
func (c *Carrier) OperatorUIServices(uiService, ours string) []string {
	if c == nil || c.profile == nil || c.profile.operatorUI == nil {
		return nil
	}
	return c.profile.operatorUI(c, uiService, ours)
}

// SchemaNeed is the field the carrier's CRD schema must keep, given the runtime's index among
// the init containers; nil when the carrier needs none.
func (c *Carrier) SchemaNeed(runtime int) *SchemaNeed {
	if c == nil || c.profile == nil || c.profile.schemaNeed == nil {
		return nil
	}
	return c.profile.schemaNeed(c, runtime)
}

// Group and Version split the carrier's apiVersion ("" group for core).
func (c *Carrier) Group() string {
	g, _, ok := strings.Cut(c.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// Version is the version part of the carrier's apiVersion.
func (c *Carrier) Version() string {
	_, v, ok := strings.Cut(c.APIVersion, "/")
	if !ok {
		return c.APIVersion
	}
	return v
}
