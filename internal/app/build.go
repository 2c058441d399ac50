package app

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// buildPod makes one application from a spark-submit driver Pod's carrier: what the
// driver's pod spec says, its Spark conf (from the ConfigMap mounted as its conf volume, which
// only the indexed input knows), its identity, the objects in the input that belong to it
// (the Services selecting it), and the names of what sparkui adds for it. Names are handed
// out in carrier order, so a rerun gets the same ones.
func (ix *index) buildPod(c *Carrier, sparkConf map[string]string) *App {
	a := &App{Carrier: c}
	spec := yamlx.Get(c.Object.YNode(), "spec")
	labels := Labels(c.Object)
	a.readConnectServer()
	a.readSparkConf(spec, ix.configMaps, sparkConf)
	a.identify(labels)
	a.IdentityKey, a.IdentityValue = names.LabelAppSelector, a.AppID
	ix.attach(a, labels)
	ix.name(a)
	ix.attachRoutes(a)
	return a
}

// buildCarrier makes one application from a carrier other than a spark-submit Pod: its facts
// come from the carrier, its identity is the object's name (the Spark app id is not known at
// build time), and no Service of the input selects its driver (the driver Pod does not exist
// yet; Spark creates its headless Service with the Pod).
func (ix *index) buildCarrier(c *Carrier) *App {
	a := &App{Carrier: c}
	a.ConfSource = FromCarrier
	a.Props = c.Conf
	a.ConfError = c.ConfError
	a.Settings, a.SettingErrors = sparkconf.Derive(a.Props)
	// A workload running start-connect-server.sh is a Connect server as much as a Pod is:
	// under hostNetwork the runtime must skip its gRPC port too.
	a.readConnectServer()
	if c.Has(CapConfAppID) {
		// The workload's Pod is the driver (client or driver-only mode): Spark's app id is
		// spark.app.id when the conf sets it, else made up at start (local-…,
		// spark-application-…).
		if id := a.Props[sparkconf.KeyAppID]; id != "" && len(validation.IsValidLabelValue(id)) == 0 {
			a.AppID = id
		}
	}
	a.IdentityKey, a.IdentityValue = LabelApplication, c.IdentityValue()
	// An older output labelled a long-named carrier's objects with its whole name (which the
	// API server refuses): they are still this application's, and get the label fixed.
	ids := []string{identityKey(a.IdentityKey, a.IdentityValue)}
	if c.Name != a.IdentityValue {
		ids = append(ids, identityKey(a.IdentityKey, c.Name))
	}
	for _, id := range ids {
		if a.UIService == nil {
			a.UIService = ix.claim(ix.carrierOurs[nsName{a.Namespace, id}])
		}
		if a.Role == nil {
			a.Role = ix.claim(ix.carrierOursRBAC[kindKey{"Role", a.Namespace, id}])
		}
		if a.RoleBinding == nil {
			a.RoleBinding = ix.claim(ix.carrierOursRBAC[kindKey{"RoleBinding", a.Namespace, id}])
		}
	}
	a.Prefix = c.Prefix()
	ix.name(a)
	ix.attachRoutes(a)
	return a
}

// readConnectServer reports a driver container that runs a Spark Connect server.
func (a *App) readConnectServer() {
	c := a.DriverContainerNode()
	for _, key := range []string{"command", "args"} {
		for _, arg := range yamlx.Items(yamlx.Get(c, key)) {
			if t := yamlx.Str(arg); strings.Contains(t, ConnectServerClass) || strings.HasSuffix(t, "/"+connectServerScript) || t == connectServerScript {
				a.ConnectServer = true
			}
		}
	}
}

// ConnectServerClass is the main class of a Spark Connect server (sbin/start-connect-server.sh
// submits it; connector/connect/server's service/SparkConnectServer.scala).
const ConnectServerClass = "org.apache.spark.sql.connect.service.SparkConnectServer"

const connectServerScript = "start-connect-server.sh"

// readSparkConf reads the Spark properties from the ConfigMap mounted as the driver's conf,
// else takes the functionConfig's, and derives the UI settings from them.
func (a *App) readSparkConf(spec *yaml.Node, configMaps map[nsName]*yaml.RNode, sparkConf map[string]string) {
	volumes := yamlx.Items(yamlx.Get(spec, "volumes"))
	for _, v := range volumes {
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
		for i, v := range volumes {
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
}

// identify sets the app id: the driver's spark-app-selector label, else spark.app.id, else
// (neither being a usable label value) one made from the Pod's name.
func (a *App) identify(labels map[string]string) {
	a.AppID = labels[names.LabelAppSelector]
	if a.AppID == "" {
		a.AppID = a.Props[sparkconf.KeyAppID]
	}
	if a.AppID == "" || len(validation.IsValidLabelValue(a.AppID)) > 0 {
		a.AppID = names.Fit(a.DriverPodName, "", nil)
	}
}

// attach finds the objects of the input that belong to a: the Services selecting its driver,
// and what sparkui added for it earlier.
func (ix *index) attach(a *App, driverLabels map[string]string) {
	a.UIService = ix.ours[nsName{a.Namespace, a.AppID}]
	// Transform labels a Pod lacking spark-app-selector with the app id (the runtime's
	// selector needs it); match Services as if it had, so a rerun sees the same ones.
	podLabels := make(map[string]string, len(driverLabels)+1)
	for k, v := range driverLabels {
		podLabels[k] = v
	}
	if _, ok := podLabels[names.LabelAppSelector]; !ok {
		podLabels[names.LabelAppSelector] = a.AppID
	}
	for _, cands := range [][]svcInfo{ix.bySelectorApp[nsName{a.Namespace, podLabels[names.LabelAppSelector]}], ix.otherSelecting[a.Namespace]} {
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
	a.Prefix = names.Prefix(driverSvcName, a.DriverPodName)

	a.Role = ix.oursRBAC[kindKey{"Role", a.Namespace, a.AppID}]
	a.RoleBinding = ix.oursRBAC[kindKey{"RoleBinding", a.Namespace, a.AppID}]
}

// name keeps the names of the UI Service and binder sparkui added before, unless taken by
// another object or invalid, and otherwise derives fresh ones from a's prefix.
func (ix *index) name(a *App) {
	svcTaken := func(n string) bool {
		// An operator's Service name is taken even when that Service is not in the input:
		// the operator creates it at run time and overwrites whatever has its name.
		if ix.usedSvc[nsName{a.Namespace, n}] || ix.model.OperatorServices[a.Namespace][n] != "" {
			return true
		}
		for _, s := range ix.svcByName[nsName{a.Namespace, n}] {
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
	ix.usedSvc[nsName{a.Namespace, a.UIServiceName}] = true

	binderTaken := func(n string) bool {
		if ix.usedBinder[nsName{a.Namespace, n}] {
			return true
		}
		for _, r := range ix.rbacByName[nsName{a.Namespace, n}] {
			if r != a.Role && r != a.RoleBinding && !a.Owns(r) {
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
	ix.usedBinder[nsName{a.Namespace, a.BinderName}] = true
}
