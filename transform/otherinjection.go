package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// RemoveOtherInjection removes what sparkui writes on the kubeflow injection not in use: the runtime
// init container, the sparkui-runtime volume (and sparkui-runtime-auth), the driver's mount
// of it, a preStop that is sparkui's withdraw hook and the identity label. So a run with one
// route on sparkui's own output of the other gives what a run on the original input gives:
// with both, an installed webhook would copy both runtimes into the driver Pod, whose
// duplicate names the API server refuses. Only those entries are touched, found through the
// other route's slots (app.Carrier.OtherInjection); a list, mapping or template sparkui's removal
// leaves empty goes with them (the template injection creates the template and its
// spark-kubernetes-driver container: one left with its name alone goes too), one that was
// empty before is kept. It reports whether anything was removed; on carriers other than
// kubeflow's it does nothing.
func RemoveOtherInjection(c *app.Carrier) bool {
	off := c.OtherInjection()
	if off == nil {
		return false
	}
	label := app.LabelApplication
	value := c.IdentityValue()
	if off.ViaWebhook() {
		_, parent, key := slotAt(off, app.SlotInitContainers)
		removed := dropNamed(parent, key, sidecar.ContainerName)
		_, parent, key = slotAt(off, app.SlotVolumes)
		removed = dropNamed(parent, key, sidecar.VolumeName, sidecar.AuthVolumeName) || removed
		if drv, _, _ := slotAt(off, app.SlotDriverContainer); drv != nil && drv.Kind == yaml.MappingNode {
			removed = dropNamed(drv, "volumeMounts", sidecar.VolumeName, sidecar.AuthVolumeName) || removed
			removed = dropOurPreStop(drv) || removed
		}
		_, parent, key = slotAt(off, app.SlotPodLabels)
		return dropLabel(parent, key, label, value) || removed
	}
	// The template injection's slots: spec.driver.template.
	ps, tmpl, _ := slotAt(off, app.SlotPodSpec)
	_, md, key := slotAt(off, app.SlotPodLabels)
	if tmpl == nil || tmpl.Kind != yaml.MappingNode {
		return false
	}
	removed := false
	if md != nil && md.Kind == yaml.MappingNode && dropLabel(md, key, label, value) {
		removed = true
		if len(md.Content) == 0 {
			yamlx.Delete(tmpl, "metadata")
		}
	}
	if ps != nil && ps.Kind == yaml.MappingNode {
		r := dropNamed(ps, "initContainers", sidecar.ContainerName)
		r = dropNamed(ps, "volumes", sidecar.VolumeName, sidecar.AuthVolumeName) || r
		if ctr, _, _ := slotAt(off, app.SlotDriverContainer); ctr != nil {
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
		_, path, _ := off.Lookup(app.SlotPodSpec)
		if drv := parentOf(off, fieldpath.Parse(path), 2); drv != nil {
			yamlx.Delete(drv, "template")
		}
	}
	return removed
}

// dropLabel removes label=value from the mapping parent[key], and the key when that empties
// it.
func dropLabel(parent *yaml.Node, key, label, value string) bool {
	l := yamlx.Get(parent, key)
	if l == nil || l.Kind != yaml.MappingNode || yamlx.GetStr(l, label) != value || !yamlx.Delete(l, label) {
		return false
	}
	if len(l.Content) == 0 {
		yamlx.Delete(parent, key)
	}
	return true
}

// slotAt is a slot's node, the mapping that holds it and its key there; nils when the slot
// is absent or a field on the way has another shape (nothing of sparkui's is then there).
func slotAt(c *app.Carrier, s app.Slot) (n, parent *yaml.Node, key string) {
	n, path, err := c.Lookup(s)
	if err != nil || path == "" {
		return nil, nil, ""
	}
	segs := fieldpath.Parse(path)
	last := segs[len(segs)-1]
	if last.Index >= 0 {
		return n, nil, ""
	}
	return n, parentOf(c, segs, 1), last.Key
}

// parentOf is the node up levels above the end of segs, nil when absent.
func parentOf(c *app.Carrier, segs []fieldpath.Segment, up int) *yaml.Node {
	if len(segs) < up {
		return nil
	}
	n := c.Object.YNode()
	for _, seg := range segs[:len(segs)-up] {
		if seg.Index >= 0 {
			items := yamlx.Items(n)
			if seg.Index >= len(items) {
				return nil
			}
			n = items[seg.Index]
			continue
		}
		if n = yamlx.Get(n, seg.Key); n == nil {
			return nil
		}
	}
	return n
}
