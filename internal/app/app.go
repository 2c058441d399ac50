// Package app finds Spark applications in a list of KRM objects: each driver Pod with the
// Services that select it, the ConfigMap that carries its spark.properties, the objects
// sparkui added for it earlier, and the settings derived from all of these. Transform and
// validate both work from this model, so they agree on what an application is.
package app

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// ConfSource says where an application's Spark properties came from.
type ConfSource string

const (
	FromConfigMap      ConfSource = "ConfigMap"
	FromFunctionConfig ConfSource = "functionConfig"
)

// ConfError is a driver ConfigMap whose spark.properties cannot be read.
type ConfError struct {
	Msg string
}

// App is one Spark application.
type App struct {
	Pod       *yaml.RNode
	Namespace string
	PodName   string
	// AppID is the spark-app-selector label value sparkui puts on what it adds and the
	// runtime's guard tests: the Pod's label, else spark.app.id, else the Pod's name.
	AppID string
	// Services select the driver Pod (sparkui's own UI Service excluded).
	Services      []*yaml.RNode
	DriverService *yaml.RNode // the one Spark created (…-driver-svc, else headless, else first)

	ConfigMap *yaml.RNode // nil when the input has none for this Pod
	// MissingConfigMap names the conf volume's ConfigMap when the input lacks it;
	// ConfVolume is that volume's index in spec.volumes.
	MissingConfigMap string
	ConfVolume       int
	ConfSource       ConfSource
	Props            map[string]string
	ConfError        *ConfError
	SettingErrors    []*sparkconf.SettingError
	Settings         sparkconf.Settings

	HostNetwork bool
	// ServiceAccount is the Pod's serviceAccountName (or deprecated serviceAccount), "" if unset.
	ServiceAccount string
	// DriverContainer is the index in spec.containers of Spark's driver container, -1 if none.
	DriverContainer int

	Prefix string
	// UIService, Role and RoleBinding are what sparkui added for this app before (found by
	// labels), nil when absent.
	UIService, Role, RoleBinding *yaml.RNode
	// UIServiceName and BinderName are the existing objects' names, else fresh ones.
	UIServiceName, BinderName string
}

// SA is the ServiceAccount the driver runs as.
func (a *App) SA() string {
	if a.ServiceAccount == "" {
		return "default"
	}
	return a.ServiceAccount
}

type nsName struct{ ns, name string }

// Model is every application in an input, plus the input-wide facts rules need.
type Model struct {
	Apps  []*App
	Items []*yaml.RNode
	// Services by namespace, every Service in the input (ignored objects excepted).
	Services map[string][]*yaml.RNode
	// RBAC holds Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.
	RBAC []*yaml.RNode
	// Duplicates are objects of the kinds above (and Pods, ConfigMaps) whose kind, namespace
	// and name an earlier item already has: applied, the later silently replaces the earlier.
	Duplicates []*yaml.RNode
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

// IsOurs reports whether rn is something sparkui added for the application with appID.
func IsOurs(rn *yaml.RNode, appID string) bool {
	l := Labels(rn)
	return l[names.LabelManagedBy] == names.ManagedByValue && l[names.LabelAppSelector] == appID
}

// Build finds the applications in items. sparkConf stands in for spark.properties for
// applications whose ConfigMap is not in the input.
func Build(items []*yaml.RNode, sparkConf map[string]string) *Model {
	m := &Model{Items: items, Services: map[string][]*yaml.RNode{}}
	configMaps := map[nsName]*yaml.RNode{}
	var pods []*yaml.RNode
	type identity struct{ group, kind, ns, name string }
	seen := map[identity]bool{}
	for _, it := range items {
		if it == nil || it.YNode() == nil || it.YNode().Kind != yaml.MappingNode || Ignored(it) {
			continue
		}
		av, kind := kindOf(it)
		ns, name := Meta(it)
		if av == "v1" || av == "rbac.authorization.k8s.io/v1" {
			id := identity{av, kind, ns, name}
			if seen[id] {
				m.Duplicates = append(m.Duplicates, it)
			}
			seen[id] = true
		}
		switch {
		case av == "v1" && kind == "Pod":
			if Labels(it)[names.LabelSparkRole] == names.RoleDriver {
				pods = append(pods, it)
			}
		case av == "v1" && kind == "Service":
			m.Services[ns] = append(m.Services[ns], it)
		case av == "v1" && kind == "ConfigMap":
			configMaps[nsName{ns, name}] = it
			// kustomize runs transformers before it fixes name references: after a namePrefix
			// the Pod still mounts the old name, which kustomize keeps in this annotation.
			for _, prev := range previousNames(it) {
				if configMaps[prev] == nil {
					configMaps[prev] = it
				}
			}
		case av == "rbac.authorization.k8s.io/v1":
			switch kind {
			case "Role", "ClusterRole":
				m.RBAC = append(m.RBAC, it)
			case "RoleBinding", "ClusterRoleBinding":
				m.RBAC = append(m.RBAC, it)
			}
		}
	}

	// Index Services once: matching every Pod against every Service is quadratic, and inputs
	// of a thousand applications in one namespace are normal for a platform repo.
	type svcInfo struct {
		rn       *yaml.RNode
		selector map[string]string
	}
	bySelectorApp := map[nsName][]svcInfo{}  // selector has spark-app-selector
	otherSelecting := map[string][]svcInfo{} // selector without it
	ours := map[nsName]*yaml.RNode{}         // sparkui UI Services by app id
	svcByName := map[nsName][]*yaml.RNode{}
	for ns, svcs := range m.Services {
		for _, svc := range svcs {
			_, name := Meta(svc)
			svcByName[nsName{ns, name}] = append(svcByName[nsName{ns, name}], svc)
			l := Labels(svc)
			if l[names.LabelManagedBy] == names.ManagedByValue {
				if id := l[names.LabelAppSelector]; id != "" && ours[nsName{ns, id}] == nil {
					ours[nsName{ns, id}] = svc
				}
				continue
			}
			sel := yamlx.StringMap(yamlx.Get(svc.YNode(), "spec", "selector"))
			if len(sel) == 0 {
				continue
			}
			if id, ok := sel[names.LabelAppSelector]; ok {
				bySelectorApp[nsName{ns, id}] = append(bySelectorApp[nsName{ns, id}], svcInfo{svc, sel})
			} else {
				otherSelecting[ns] = append(otherSelecting[ns], svcInfo{svc, sel})
			}
		}
	}
	type kindKey struct{ kind, ns, appID string }
	oursRBAC := map[kindKey]*yaml.RNode{}
	rbacByName := map[nsName][]*yaml.RNode{}
	for _, r := range m.RBAC {
		ns, name := Meta(r)
		rbacByName[nsName{ns, name}] = append(rbacByName[nsName{ns, name}], r)
		l := Labels(r)
		if l[names.LabelManagedBy] == names.ManagedByValue {
			k := kindKey{yamlx.GetStr(r.YNode(), "kind"), ns, l[names.LabelAppSelector]}
			if oursRBAC[k] == nil {
				oursRBAC[k] = r
			}
		}
	}

	usedSvc := map[nsName]bool{}
	usedBinder := map[nsName]bool{}
	for _, pod := range pods {
		a := &App{Pod: pod, DriverContainer: -1}
		a.Namespace, a.PodName = Meta(pod)
		podLabels := Labels(pod)
		spec := yamlx.Get(pod.YNode(), "spec")
		a.HostNetwork = yamlx.GetStr(spec, "hostNetwork") == "true"
		a.ServiceAccount = yamlx.GetStr(spec, "serviceAccountName")
		if a.ServiceAccount == "" {
			a.ServiceAccount = yamlx.GetStr(spec, "serviceAccount")
		}
		for i, c := range yamlx.Items(yamlx.Get(spec, "containers")) {
			if yamlx.GetStr(c, "name") == names.DriverContainer {
				a.DriverContainer = i
			}
		}
		if a.DriverContainer < 0 && len(yamlx.Items(yamlx.Get(spec, "containers"))) > 0 {
			// A pod template may rename Spark's container; Spark then uses the first one.
			a.DriverContainer = 0
		}

		// Spark properties: the ConfigMap mounted as the driver's conf, else the fallback.
		for _, v := range yamlx.Items(yamlx.Get(spec, "volumes")) {
			cmName := yamlx.GetStr(v, "configMap", "name")
			if cmName == "" {
				continue // not a ConfigMap volume: must not match a nameless ConfigMap
			}
			cm := configMaps[nsName{a.Namespace, cmName}]
			if cm == nil || yamlx.Get(cm.YNode(), "data", names.SparkPropertiesKey) == nil {
				continue
			}
			if a.ConfigMap == nil || yamlx.GetStr(v, "name") == names.SparkConfVolume {
				a.ConfigMap = cm
			}
		}
		if a.ConfigMap == nil {
			for i, v := range yamlx.Items(yamlx.Get(spec, "volumes")) {
				if yamlx.GetStr(v, "name") == names.SparkConfVolume {
					a.MissingConfigMap, a.ConfVolume = yamlx.GetStr(v, "configMap", "name"), i
				}
			}
		}
		if a.ConfigMap != nil {
			a.ConfSource = FromConfigMap
			data := yamlx.Get(a.ConfigMap.YNode(), "data", names.SparkPropertiesKey)
			if data.Kind != yaml.ScalarNode {
				a.ConfError = &ConfError{Msg: "is not a string"}
			} else if p, err := sparkconf.Parse(data.Value); err != nil {
				a.ConfError = &ConfError{Msg: err.Error()}
			} else {
				a.Props = p
			}
		} else {
			a.ConfSource = FromFunctionConfig
			a.Props = sparkConf
		}
		a.Settings, a.SettingErrors = sparkconf.Derive(a.Props)

		a.AppID = podLabels[names.LabelAppSelector]
		if a.AppID == "" {
			a.AppID = a.Props[sparkconf.KeyAppID]
		}
		if a.AppID == "" || len(validation.IsValidLabelValue(a.AppID)) > 0 {
			a.AppID = names.Fit(a.PodName, "", nil)
		}

		a.UIService = ours[nsName{a.Namespace, a.AppID}]
		// Transform labels a Pod lacking spark-app-selector with the app id (the runtime's
		// selector needs it); match Services as if it had, so a rerun sees the same ones.
		if _, ok := podLabels[names.LabelAppSelector]; !ok {
			podLabels[names.LabelAppSelector] = a.AppID
		}
		for _, cands := range [][]svcInfo{bySelectorApp[nsName{a.Namespace, podLabels[names.LabelAppSelector]}], otherSelecting[a.Namespace]} {
			for _, c := range cands {
				if subset(c.selector, podLabels) {
					a.Services = append(a.Services, c.rn)
				}
			}
		}
		a.DriverService = pickDriverService(a.Services)
		driverSvcName := ""
		if a.DriverService != nil {
			_, driverSvcName = Meta(a.DriverService)
		}
		a.Prefix = names.Prefix(driverSvcName, a.PodName)

		a.Role = oursRBAC[kindKey{"Role", a.Namespace, a.AppID}]
		a.RoleBinding = oursRBAC[kindKey{"RoleBinding", a.Namespace, a.AppID}]

		svcTaken := func(n string) bool {
			if usedSvc[nsName{a.Namespace, n}] {
				return true
			}
			for _, s := range svcByName[nsName{a.Namespace, n}] {
				if s != a.UIService {
					return true
				}
			}
			return false
		}
		if a.UIService != nil {
			_, a.UIServiceName = Meta(a.UIService)
		}
		if a.UIServiceName == "" || svcTaken(a.UIServiceName) || len(validation.IsDNS1035Label(a.UIServiceName)) > 0 {
			a.UIServiceName = names.Fit(a.Prefix, names.UISvcSuffix, svcTaken)
		}
		usedSvc[nsName{a.Namespace, a.UIServiceName}] = true

		binderTaken := func(n string) bool {
			if usedBinder[nsName{a.Namespace, n}] {
				return true
			}
			for _, r := range rbacByName[nsName{a.Namespace, n}] {
				if !IsOurs(r, a.AppID) {
					return true
				}
			}
			return false
		}
		if a.Role != nil {
			_, a.BinderName = Meta(a.Role)
		}
		if a.BinderName == "" || binderTaken(a.BinderName) {
			a.BinderName = names.Fit(a.Prefix, names.BinderSuffix, binderTaken)
		}
		usedBinder[nsName{a.Namespace, a.BinderName}] = true

		m.Apps = append(m.Apps, a)
	}
	return m
}

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

// DriverContainerNode is the driver container's mapping node, nil if the Pod has none.
func (a *App) DriverContainerNode() *yaml.Node {
	cs := yamlx.Items(yamlx.Get(a.Pod.YNode(), "spec", "containers"))
	if a.DriverContainer < 0 || a.DriverContainer >= len(cs) {
		return nil
	}
	return cs[a.DriverContainer]
}

// DriverContainerPath is the driver container's field path, e.g. "spec.containers[0]".
func (a *App) DriverContainerPath() string {
	return "spec.containers[" + strconv.Itoa(a.DriverContainer) + "]"
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
