package app

import (
	"errors"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// The kubeflow spark-operator (github.com/kubeflow/spark-operator). Sources are named as in
// docs/operators.md; they were read at commit 38082f33 (after v2.5.2).

const kubeflowAPIVersion = "sparkoperator.k8s.io/v1beta2"

// ErrNoPodSpec is asked-for pod spec on the kubeflow webhook route: there the operator's
// webhook copies spec.driver fields into the Pod and nothing is a pod spec.
var ErrNoPodSpec = errors.New("app: the kubeflow webhook route has no pod spec to write to")

// detectKubeflow reads a SparkApplication, or a ScheduledSparkApplication whose
// spec.template is the SparkApplicationSpec every run is created from
// (scheduledsparkapplication/controller.go createSparkApplication copies it verbatim).
func (c *Carrier) detectKubeflow(opts CarrierOptions) error {
	c.Route = opts.KubeflowRoute
	if c.ObjectKind == "ScheduledSparkApplication" {
		p, err := c.readScalar("spec", "concurrencyPolicy")
		if err != nil {
			return err
		}
		// Kept as written: the CRD has no default and shouldStartNextRun treats an unset
		// policy as "no further run" once one run exists.
		c.ConcurrencyPolicy = p
	}
	var err error
	if c.Conf, err = c.readStringMap(cat(c.base, "sparkConf")...); err != nil {
		return err
	}
	c.ConfPath = joinPath(cat(c.base, "sparkConf")...)
	c.readIPFamilies()

	// spec.mode → --deploy-mode, defaulted to cluster (api/v1beta2/defaults.go).
	if c.DeployMode, err = c.readScalar(cat(c.base, "mode")...); err != nil {
		return err
	}
	if c.DeployMode == "" {
		c.DeployMode = "cluster"
	}
	if c.MainClass, err = c.readScalar(cat(c.base, "mainClass")...); err != nil {
		return err
	}
	if c.SparkVersion, err = c.readScalar(cat(c.base, "sparkVersion")...); err != nil {
		return err
	}
	if _, _, err = c.walk(false, cat(c.base, "driver")...); err != nil {
		return err
	}

	// The template is used whenever it is set (submission.go driverPodTemplateOption), on
	// either route, so its shape and facts always count.
	tmplSA, tmplSAPath, tmplHostNet, err := c.readPodSpecFacts()
	if err != nil {
		return err
	}
	lc, lcPath, err := c.walk(false, cat(c.base, "driver", "lifecycle")...)
	if err != nil {
		return err
	}
	if lc != nil {
		c.UserLifecyclePath = lcPath
	}
	if c.Route == RouteWebhook {
		for _, l := range [][]string{cat(c.base, "driver", "initContainers"), cat(c.base, "driver", "volumeMounts"), cat(c.base, "volumes")} {
			if _, _, err := c.walkSeq(false, l...); err != nil {
				return err
			}
		}
	}
	if _, err := c.readStringMap(cat(c.base, "driver", "labels")...); err != nil {
		return err
	}
	// driver.hostNetwork is applied by the webhook (sparkpod_defaulter.go addHostNetwork);
	// the template's by Spark. Either puts the driver on the host network.
	hostNet, err := c.readBool(cat(c.base, "driver", "hostNetwork")...)
	if err != nil {
		return err
	}
	c.HostNetwork = hostNet || tmplHostNet

	// ServiceAccount: driver.serviceAccount becomes
	// spark.kubernetes.authenticate.driver.serviceAccountName (driverConfOption, emitted
	// after sparkConfOption, so it wins: last --conf wins); that conf, when set, overrides
	// the template's serviceAccountName (Spark DriverKubernetesCredentialsFeatureStep).
	saPath := joinPath(cat(c.base, "driver", "serviceAccount")...)
	if c.ServiceAccount, err = c.readScalar(cat(c.base, "driver", "serviceAccount")...); err != nil {
		return err
	}
	c.ServiceAccountPath = saPath
	if c.ServiceAccount == "" {
		c.ServiceAccount, c.ServiceAccountPath = c.Conf[KeyDriverSA], fieldpath.Key(c.ConfPath, KeyDriverSA)
	}
	if c.ServiceAccount == "" {
		c.ServiceAccount, c.ServiceAccountPath = tmplSA, tmplSAPath
	}

	// Driver Pod name: pkg/util/sparkapplication.go GetDriverPodName. A scheduled run is
	// named <ssa>-<timestamp>, so only an explicit name is known for it.
	if c.DriverPodName, err = c.readScalar(cat(c.base, "driver", "podName")...); err != nil {
		return err
	}
	if c.DriverPodName == "" {
		c.DriverPodName = c.Conf[KeyDriverPodName]
	}
	if c.DriverPodName == "" && c.ObjectKind == "SparkApplication" {
		c.DriverPodName = c.Name + "-driver"
	}
	return nil
}

// webhookSlot places additions where the kubeflow mutating webhook picks them up
// (internal/webhook/sparkpod_defaulter.go): addInitContainers appends
// driver.initContainers; addVolumes adds a spec.volumes entry only when driver.volumeMounts
// mounts it (into the Spark container); addPodLifeCycleConfig replaces the Spark
// container's lifecycle with driver.lifecycle. Labels go through driver.labels
// (→ spark.kubernetes.driver.label.*, no webhook needed).
func (c *Carrier) webhookSlot(s Slot, create bool) (*yaml.Node, string, error) {
	switch s {
	case SlotInitContainers:
		return c.walkSeq(create, cat(c.base, "driver", "initContainers")...)
	case SlotVolumes:
		return c.walkSeq(create, cat(c.base, "volumes")...)
	case SlotDriverContainer:
		return c.walk(create, cat(c.base, "driver")...)
	case SlotPodLabels:
		return c.walk(create, cat(c.base, "driver", "labels")...)
	case SlotPodSpec:
		return nil, "", ErrNoPodSpec
	}
	return nil, "", errors.New("app: unknown slot")
}

// TemplateRouteRefused reports a kubeflow carrier on the template route whose
// spec.sparkVersion is below 3: the operator's validating webhook refuses a driver template
// for it ("pod template feature requires Spark version 3.0.0 or higher",
// internal/webhook/sparkapplication_validator.go), so only the webhook route can carry the
// additions. An unreadable version is not reported here.
func (c *Carrier) TemplateRouteRefused() bool {
	if c.Kind != KindKubeflow || c.Route != RouteTemplate {
		return false
	}
	major, _, _ := strings.Cut(strings.TrimPrefix(c.SparkVersion, "v"), ".")
	n, err := strconv.Atoi(major)
	return err == nil && n < 3
}

// OffRoute is a kubeflow carrier read on the route not in use (its Lookup finds the other
// route's slots), nil for every other carrier.
func (c *Carrier) OffRoute() *Carrier {
	if c.Kind != KindKubeflow {
		return nil
	}
	o := *c
	o.Route = RouteWebhook
	if c.Route == RouteWebhook {
		o.Route = RouteTemplate
	}
	return &o
}

// RemoveOffRoute removes what sparkui writes on the kubeflow route not in use: the runtime
// init container, the sparkui-runtime volume (and sparkui-runtime-auth), the driver's mount
// of it, a preStop that is sparkui's withdraw hook and the identity label. So a run with one
// route on sparkui's own output of the other gives what a run on the original input gives:
// with both, an installed webhook would copy both runtimes into the driver Pod, whose
// duplicate names the API server refuses. Only those entries are touched; a list, mapping or
// template sparkui's removal leaves empty goes with them (the template route creates the
// template and its spark-kubernetes-driver container: one left with its name alone goes too),
// one that was empty before is kept. It reports whether anything was removed.
func (c *Carrier) RemoveOffRoute() bool {
	if c.Kind != KindKubeflow {
		return false
	}
	spec, _, err := c.walk(false, c.base...)
	if err != nil || spec == nil {
		return false
	}
	drv := yamlx.Get(spec, "driver")
	if drv == nil || drv.Kind != yaml.MappingNode {
		return false
	}
	if c.Route == RouteTemplate {
		// The webhook route's slots (webhookSlot).
		removed := dropNamed(drv, "initContainers", sidecar.ContainerName)
		removed = dropNamed(spec, "volumes", sidecar.VolumeName, sidecar.AuthVolumeName) || removed
		removed = dropNamed(drv, "volumeMounts", sidecar.VolumeName, sidecar.AuthVolumeName) || removed
		removed = dropOurPreStop(drv) || removed
		return dropKey(drv, "labels", LabelApplication, c.IdentityValue()) || removed
	}
	// The template route's slots (slot): spec.driver.template.
	tmpl := yamlx.Get(drv, "template")
	if tmpl == nil || tmpl.Kind != yaml.MappingNode {
		return false
	}
	removed := false
	if md := yamlx.Get(tmpl, "metadata"); md != nil && md.Kind == yaml.MappingNode && dropKey(md, "labels", LabelApplication, c.IdentityValue()) {
		removed = true
		if len(md.Content) == 0 {
			yamlx.Delete(tmpl, "metadata")
		}
	}
	if ps := yamlx.Get(tmpl, "spec"); ps != nil && ps.Kind == yaml.MappingNode {
		r := dropNamed(ps, "initContainers", sidecar.ContainerName)
		r = dropNamed(ps, "volumes", sidecar.VolumeName, sidecar.AuthVolumeName) || r
		tc := *c
		tc.Route = RouteTemplate
		if ctr, _, err := tc.driverContainer(false); err == nil && ctr != nil {
			changed := dropNamed(ctr, "volumeMounts", sidecar.VolumeName)
			changed = dropOurPreStop(ctr) || changed
			if changed && len(ctr.Content) == 2 && yamlx.GetStr(ctr, "name") == names.DriverContainer {
				yamlx.Filter(yamlx.Get(ps, "containers"), func(e *yaml.Node) bool { return e != ctr })
				if len(yamlx.Get(ps, "containers").Content) == 0 {
					yamlx.Delete(ps, "containers")
				}
			}
			r = changed || r
		}
		if r && len(ps.Content) == 0 {
			yamlx.Delete(tmpl, "spec")
		}
		removed = r || removed
	}
	if removed && len(tmpl.Content) == 0 {
		yamlx.Delete(drv, "template")
	}
	return removed
}

// dropNamed removes the entries called one of names from the sequence m[key], and the key
// when that empties it.
func dropNamed(m *yaml.Node, key string, names ...string) bool {
	list := yamlx.Get(m, key)
	removed := yamlx.Filter(list, func(e *yaml.Node) bool {
		for _, n := range names {
			if e.Kind == yaml.MappingNode && yamlx.GetStr(e, "name") == n {
				return false
			}
		}
		return true
	})
	if removed && len(list.Content) == 0 {
		yamlx.Delete(m, key)
	}
	return removed
}

// dropKey removes label=value from the mapping m[key], and the key when that empties it.
func dropKey(m *yaml.Node, key, label, value string) bool {
	l := yamlx.Get(m, key)
	if l == nil || l.Kind != yaml.MappingNode || yamlx.GetStr(l, label) != value || !yamlx.Delete(l, label) {
		return false
	}
	if len(l.Content) == 0 {
		yamlx.Delete(m, key)
	}
	return true
}

// dropOurPreStop removes sparkui's withdraw preStop from container-like mapping c, and the
// lifecycle when that empties it.
func dropOurPreStop(c *yaml.Node) bool {
	lc := yamlx.Get(c, "lifecycle")
	if lc == nil || lc.Kind != yaml.MappingNode || !IsOurPreStop(yamlx.Get(lc, "preStop")) {
		return false
	}
	yamlx.Delete(lc, "preStop")
	if len(lc.Content) == 0 {
		yamlx.Delete(c, "lifecycle")
	}
	return true
}
