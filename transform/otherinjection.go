package transform

import (
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// RemoveOtherInjection removes what sparkui writes on the kubeflow injection not in use
// (OtherInjectionPlan). It reports whether anything was removed; on carriers other than
// kubeflow's it does nothing.
func RemoveOtherInjection(c *app.Carrier) bool {
	changed, _ := OtherInjectionPlan(c).Apply(c)
	return changed
}

// OtherInjectionPlan takes out what sparkui writes on the kubeflow injection not in use: the
// runtime init container, the sparkui-runtime volume (and sparkui-runtime-auth), the
// driver's mount of it, a preStop that is sparkui's withdraw hook and the identity label. So
// a run with one route on sparkui's own output of the other gives what a run on the original
// input gives: with both, an installed webhook would copy both runtimes into the driver Pod,
// whose duplicate names the API server refuses. Only those entries are touched, found through
// the other route's slots (app.Carrier.OtherInjection); a list, mapping or template sparkui's
// removal leaves empty goes with them (the template injection creates the template and its
// spark-kubernetes-driver container: one left with its name alone goes too), one that was
// empty before is kept. Empty on carriers other than kubeflow's.
func OtherInjectionPlan(c *app.Carrier) Plan {
	off := c.OtherInjection()
	if off == nil {
		return nil
	}
	return injectionRemoval(c, off)
}

// injectionRemoval takes out what sparkui writes into off, c read on one injection (the one
// not in use, or for UninstallPlan the one in use): what OtherInjectionPlan describes. A
// carrier without a webhook injection is read as its template one: a pod spec sparkui made
// (an Apache podTemplateSpec, a kubeflow driver template) goes once emptied, one the user
// wrote keeps everything but sparkui's entries.
func injectionRemoval(c, off *app.Carrier) Plan {
	label := removeIf(slotPath(off, app.SlotPodLabels), app.LabelApplication, yamlx.NewStr(c.IdentityValue()))
	if off.ViaWebhook() {
		p := removeNamed(off, app.SlotInitContainers, sidecar.ContainerName)
		p = append(p, removeNamed(off, app.SlotVolumes, sidecar.VolumeName, sidecar.AuthVolumeName)...)
		p = append(p, driverRemovals(slotPath(off, app.SlotDriverContainer), sidecar.VolumeName, sidecar.AuthVolumeName)...)
		return append(p, label...)
	}
	// The template injection's slots: spec.driver.template.
	spec := slotPath(off, app.SlotPodSpec)
	if spec == "" {
		return nil
	}
	p := append(label, prune(parentPath(slotPath(off, app.SlotPodLabels)))...)
	p = append(p, removeNamed(off, app.SlotInitContainers, sidecar.ContainerName)...)
	p = append(p, removeNamed(off, app.SlotVolumes, sidecar.VolumeName, sidecar.AuthVolumeName)...)
	if drv := slotPath(off, app.SlotDriverContainer); drv != "" {
		p = append(p, driverRemovals(drv, sidecar.VolumeName)...)
		p = append(p, Op{Kind: OpRemove, Path: fieldpath.Key(spec, "containers"), Names: driverNames(off), When: Bare})
	}
	// Up to the field holding the template (an Apache driverSpec, a Stackable podOverrides'
	// parent stays: prune keeps what this plan emptied nothing under).
	p = append(p, prune(spec)...)
	p = append(p, prune(parentPath(spec))...)
	return append(p, prune(parentPath(parentPath(spec)))...)
}

// driverNames are the names the driver container sparkui makes in a template may have:
// Spark's (names.DriverContainer), or the one the carrier's operator gives it (Stackable's
// "spark"), read from the slot.
func driverNames(c *app.Carrier) []string {
	out := []string{names.DriverContainer}
	if n, _, err := c.Lookup(app.SlotDriverContainer); err == nil {
		if name := yamlx.GetStr(n, "name"); name != "" && name != names.DriverContainer {
			out = append(out, name)
		}
	}
	return out
}

// slotPath is a slot's field path, "" when a field on the way has another shape (nothing of
// sparkui's is then there) or the carrier has no such slot.
func slotPath(c *app.Carrier, s app.Slot) string {
	_, path, err := c.Lookup(s)
	if err != nil {
		return ""
	}
	return path
}

// parentPath is the path of the field holding the one at path, "" for none.
func parentPath(path string) string {
	segs := fieldpath.Parse(path)
	if len(segs) < 2 {
		return ""
	}
	return fieldpath.Format(segs[:len(segs)-1])
}

// removeNamed takes the entries called one of names out of a slot's list.
func removeNamed(c *app.Carrier, s app.Slot, names ...string) Plan {
	return removeIn(slotPath(c, s), names...)
}

func removeIn(list string, names ...string) Plan {
	if list == "" {
		return nil
	}
	var uniq []string // the runtime's container and its volume share a name
	for _, n := range names {
		if !slices.Contains(uniq, n) {
			uniq = append(uniq, n)
		}
	}
	return Plan{{Kind: OpRemove, Path: list, Names: uniq}}
}

// removeIf takes key out of the mapping at path when its value is value (any value: nil).
func removeIf(path, key string, value *yaml.Node) Plan {
	if path == "" {
		return nil
	}
	o := Op{Kind: OpRemove, Path: fieldpath.Key(path, key)}
	if value != nil {
		o.When, o.Value = Equal, value
	}
	return Plan{o}
}

func prune(path string) Plan {
	if path == "" {
		return nil
	}
	return Plan{{Kind: OpPrune, Path: path}}
}

// driverRemovals takes the driver container's (spec.driver's on the webhook injection) mounts
// of the volumes named vols and sparkui's withdraw preStop out.
func driverRemovals(drv string, vols ...string) Plan {
	if drv == "" {
		return nil
	}
	return Plan{
		{Kind: OpRemove, Path: fieldpath.Key(drv, "volumeMounts"), Names: vols},
		{Kind: OpRemove, Path: fieldpath.Key(fieldpath.Key(drv, "lifecycle"), "preStop"), When: OurPreStop},
	}
}
