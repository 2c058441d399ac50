// Package app finds Spark applications in a list of KRM objects: each driver found in a
// carrier (a spark-submit driver Pod with the Services that select it and the ConfigMap that
// carries its spark.properties; a kubeflow or Apache SparkApplication; a driver workload),
// the objects sparkui added for it earlier, and the settings derived from all of these. Transform and
// validate both work from this model, so they agree on what an application is.
package app

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// ConfSource says where an application's Spark properties came from.
type ConfSource string

const (
	FromConfigMap      ConfSource = "ConfigMap"
	FromFunctionConfig ConfSource = "functionConfig"
	// FromCarrier is an operator resource's spec.sparkConf, or a workload's conf (the
	// functionConfig's sparkConf overlaid by a mounted spark-defaults.conf and the driver
	// container's --conf arguments): Carrier.Conf.
	FromCarrier ConfSource = "carrier"
)

// ConfError is a driver ConfigMap whose spark.properties cannot be read.
type ConfError struct {
	Msg string
}

// App is one Spark application: facts read from the input, never written after Build. It
// embeds the Carrier the driver was found in (its object, name, namespace, ServiceAccount,
// hostNetwork, driver Pod name, slots), so a fact lives in one place; App adds what only the
// whole input tells (the conf as Spark will read it, identity, what sparkui added before, the
// names of what it adds).
type App struct {
	// Carrier is what was read from the object the driver was found in: the spark-submit
	// driver Pod itself, or an operator's resource or workload. Results about the driver's
	// pod spec name Carrier.Object.
	*Carrier
	// Submitted is what only a spark-submit driver Pod has: the other objects spark-submit
	// wrote for it (zero for every other carrier).
	Submitted
	// AppID is, for a spark-submit Pod, the spark-app-selector label value sparkui puts on
	// what it adds and the runtime's guard tests: the Pod's label, else spark.app.id, else the
	// Pod's name. For the other carriers it is the Spark app id only when the conf fixes it
	// (a workload's spark.app.id), "" otherwise: the runtime reads it at run time.
	AppID string
	// IdentityKey and IdentityValue are the label on everything sparkui adds for this
	// application and on its driver Pod (docs/operators.md, "Names and identity"): spark-app-selector=<AppID> for a
	// spark-submit Pod, sparkui.dev/application=<object name> for every other carrier.
	IdentityKey, IdentityValue string

	// ConfSource says where Props came from; for every carrier but a spark-submit Pod it is
	// the carrier's own Conf.
	ConfSource    ConfSource
	Props         map[string]string
	ConfError     *ConfError
	SettingErrors []*sparkconf.SettingError
	Settings      sparkconf.Settings

	// ConnectServer: the driver container runs Spark Connect's server class.
	ConnectServer bool

	Prefix string
	// UIService, Role and RoleBinding are what sparkui added for this app before (found by
	// labels), nil when absent.
	UIService, Role, RoleBinding *yaml.RNode
	// Routes are the route objects sparkui added for this app before, by kind (HTTPRoute,
	// GRPCRoute, Ingress, Route); nil when none.
	Routes map[string]*yaml.RNode
	// ExtraRoutes are further route objects of sparkui's for this app, of a kind Routes
	// already has (a copy under another name): applied, both would route, each its own way.
	ExtraRoutes []*yaml.RNode
	// UIServiceName and BinderName are the existing objects' names, else fresh ones.
	UIServiceName, BinderName string
}

// Submitted is what spark-submit writes beside its driver Pod, found in the input by Build.
type Submitted struct {
	// Services select the driver Pod (sparkui's own UI Service excluded).
	Services      []*yaml.RNode
	DriverService *yaml.RNode // the one Spark created (…-driver-svc, else headless, else first)
	// ConfigMap is the one mounted as the driver's conf, nil when the input has none.
	ConfigMap *yaml.RNode
	// MissingConfigMap names the conf volume's ConfigMap when the input lacks it;
	// ConfVolume is that volume's index in spec.volumes.
	MissingConfigMap string
	ConfVolume       int
}

// SA is the ServiceAccount the driver runs as.
func (a *App) SA() string {
	if a.ServiceAccount == "" {
		return "default"
	}
	return a.ServiceAccount
}

type nsName struct{ ns, name string }

// CarrierError is a carrier kind's object whose fields have the wrong shape.
type CarrierError struct {
	Object *yaml.RNode
	Err    *ShapeError
}

// Model is every application in an input, plus the input-wide facts rules need.
type Model struct {
	Apps  []*App
	Items []*yaml.RNode
	// Services by namespace, every Service in the input (ignored objects excepted).
	Services map[string][]*yaml.RNode
	// RBAC holds Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.
	RBAC []*yaml.RNode
	// OperatorServices are the names, by namespace, of the Services operators will create
	// for resources in the input (internal/names/operators.go), each with who makes it and
	// why: no UI Service may take one (the operator would overwrite it).
	OperatorServices map[string]map[string]string
	// CarrierErrors are carriers whose fields have the wrong shape: no application was built
	// from them, and they are written back unchanged.
	CarrierErrors []CarrierError
	// HistoryServers are carriers that run a Spark History Server (main class
	// org.apache.spark.deploy.history.HistoryServer): no driver's UI, left alone.
	HistoryServers []*Carrier
	// Duplicates are core v1, RBAC and carrier objects whose API group, kind, namespace and
	// name an earlier item already has: applied, the later silently replaces the earlier. A
	// duplicate carrier is no application: only the first copy is built and rewritten.
	Duplicates []*yaml.RNode
	// Ingresses are every networking.k8s.io/v1 Ingress of the input.
	Ingresses []*yaml.RNode
	// ForeignRoutes are the route objects (RouteObjectKinds) of the input that are not
	// sparkui's, by "kind/namespace/name": sparkui never writes a route of the same name.
	ForeignRoutes map[string]*yaml.RNode
}

// Ignored reports whether an object is out of sparkui's hands: local configuration and
// sparkui's own function configs.
func Ignored(rn *yaml.RNode) bool {
	if yamlx.GetStr(rn.YNode(), "metadata", "annotations", names.AnnotationLocalConfig) == "true" {
		return true
	}
	return strings.HasPrefix(yamlx.GetStr(rn.YNode(), "apiVersion"), names.ConfigGroup+"/")
}

func kindOf(rn *yaml.RNode) (apiVersion, kind string) {
	return yamlx.GetStr(rn.YNode(), "apiVersion"), yamlx.GetStr(rn.YNode(), "kind")
}

// Meta reads namespace and name without kyaml's error paths (arbitrary input).
func Meta(rn *yaml.RNode) (namespace, name string) {
	md := yamlx.Get(rn.YNode(), "metadata")
	return yamlx.GetStr(md, "namespace"), yamlx.GetStr(md, "name")
}

// Labels reads metadata.labels.
func Labels(rn *yaml.RNode) map[string]string {
	return yamlx.StringMap(yamlx.Get(rn.YNode(), "metadata", "labels"))
}

// IsOursBy reports whether rn is something sparkui added for the application whose identity
// label is key=value.
func IsOursBy(rn *yaml.RNode, key, value string) bool {
	l := Labels(rn)
	return l[names.LabelManagedBy] == names.ManagedByValue && l[key] == value
}

// Owns reports whether rn is something sparkui added for a.
func (a *App) Owns(rn *yaml.RNode) bool { return IsOursBy(rn, a.IdentityKey, a.IdentityValue) }

// IsSubmitOutput reports whether a was found in spark-submit's own output, a driver Pod
// (CapSubmitOutput): its conf and driver Service are other objects of the input.
func (a *App) IsSubmitOutput() bool { return a.Carrier == nil || a.Carrier.Has(CapSubmitOutput) }

const (
	annoPreviousNames      = "internal.config.kubernetes.io/previousNames"
	annoPreviousNamespaces = "internal.config.kubernetes.io/previousNamespaces"
)

// previousNames reads the names kustomize recorded for an object it renamed.
func previousNames(rn *yaml.RNode) []nsName {
	ann := yamlx.Get(rn.YNode(), "metadata", "annotations")
	names := yamlx.GetStr(ann, annoPreviousNames)
	if names == "" {
		return nil
	}
	cur, _ := Meta(rn)
	nss := strings.Split(yamlx.GetStr(ann, annoPreviousNamespaces), ",")
	var out []nsName
	for i, n := range strings.Split(names, ",") {
		ns := cur
		if i < len(nss) && nss[i] != "" && nss[i] != "~X" {
			ns = nss[i]
		}
		out = append(out, nsName{cur, n}, nsName{ns, n})
	}
	return out
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

func pickDriverService(svcs []*yaml.RNode) *yaml.RNode {
	for _, s := range svcs {
		if _, n := Meta(s); n != names.DriverSvcSuffix && strings.HasSuffix(n, names.DriverSvcSuffix) {
			return s
		}
	}
	for _, s := range svcs {
		if yamlx.GetStr(s.YNode(), "spec", "clusterIP") == "None" {
			return s
		}
	}
	if len(svcs) > 0 {
		return svcs[0]
	}
	return nil
}

// DriverContainerNode is the driver container's mapping node, nil if the Pod has none. On
// the kubeflow webhook injection it is spec.driver, whose lifecycle, volumeMounts and ports the
// operator's webhook copies into the Spark container.
func (a *App) DriverContainerNode() *yaml.Node {
	n, _, _ := a.Carrier.Lookup(SlotDriverContainer)
	return n
}

// DriverContainerPath is the driver container's field path, e.g. "spec.containers[0]",
// "spec.driver.template.spec.containers[0]".
func (a *App) DriverContainerPath() string {
	_, p, _ := a.Carrier.Lookup(SlotDriverContainer)
	return p
}

// Slot is the node and field path of one of the driver's pod-level places (nil node when
// absent; the path is then where it would be written).
func (a *App) Slot(s Slot) (*yaml.Node, string) {
	n, p, _ := a.Carrier.Lookup(s)
	return n, p
}

// Containers is the driver pod spec's containers and their field path; none on the kubeflow
// webhook injection, which has no pod spec.
func (a *App) Containers() (*yaml.Node, string) {
	spec, p := a.Slot(SlotPodSpec)
	if p == "" {
		return nil, ""
	}
	return yamlx.Get(spec, "containers"), p + ".containers"
}

// ServiceAccountField is the field that sets (or would set) the driver's ServiceAccount.
func (a *App) ServiceAccountField() string {
	c := a.Carrier
	if c.ServiceAccountPath != "" && !c.Has(CapSubmitOutput) {
		// A spark-submit Pod's deprecated spec.serviceAccount is not where the name belongs.
		return c.ServiceAccountPath
	}
	switch {
	case c.profile.saField != nil:
		// kubeflow's driver.serviceAccount: its validating webhook at HEAD refuses the conf key.
		return joinPath(cat(c.base, c.profile.saField...)...)
	case c.profile.saConf:
		return fieldpath.Key(c.ConfPath, KeyDriverSA)
	}
	return joinPath(c.podSpecPath()...) + ".serviceAccountName"
}

// ConfField is the field path of Spark property key in the carrier's conf, "" when the conf
// is not one field (spark-submit Pods, workloads).
func (a *App) ConfField(key string) string {
	if a.Carrier.ConfPath == "" {
		return ""
	}
	return fieldpath.Key(a.Carrier.ConfPath, key)
}

// Source is where an object came from, for results: the path and index annotations kustomize
// and kpt set, when present.
func Source(rn *yaml.RNode) (path string, index int, ok bool) {
	p, i, err := kioutil.GetFileAnnotations(rn)
	if err != nil || p == "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(i)
	if err != nil {
		n = 0
	}
	return p, n, true
}
