package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// IsUIContainerPort reports whether a driver containerPort is the UI's: Spark names it
// spark-ui; a hand-written Pod may only match by number.
func IsUIContainerPort(a *app.App, p *yaml.Node) bool {
	if yamlx.GetStr(p, "name") == names.UIPortName {
		return true
	}
	n, ok := yamlx.Port(yamlx.Get(p, "containerPort"))
	if !ok || n == 0 {
		return false
	}
	return n == a.Settings.UIPort || (a.Settings.TLS && n == a.Settings.SSLPort)
}

// zeroPortEdits take out the driver container's zero ports (and, under hostNetwork, its UI
// port, which would become a hostPort) and the zero ports of the Services selecting the
// driver, skipping those in seen (a Service selecting two drivers is planned once). An
// explicit targetPort 0 on an otherwise valid Service port is removed, so it defaults to the
// port.
func zeroPortEdits(a *app.App, seen map[*yaml.RNode]bool) []Edit {
	var out []Edit
	if c, path := a.Slot(app.SlotDriverContainer); c != nil {
		ports := yamlx.Get(c, "ports")
		var drop []int
		for i, p := range yamlx.Items(ports) {
			if app.ZeroContainerPort(p) || a.HostNetwork && IsUIContainerPort(a, p) {
				drop = append(drop, i)
			}
		}
		// A list left empty goes, as does one that was: an empty ports list says nothing.
		if ports != nil && ports.Kind == yaml.SequenceNode && (len(drop) > 0 || len(ports.Content) == 0) {
			out = append(out, Edit{Object: a.Object, Plan: Plan{{Kind: OpDrop, Path: fieldpath.Key(path, "ports"), Indexes: drop}}})
		}
	}
	for _, svc := range a.Services {
		if seen[svc] {
			continue
		}
		seen[svc] = true
		var p Plan
		var drop []int
		for i, port := range yamlx.Items(yamlx.Get(svc.YNode(), "spec", "ports")) {
			switch {
			case app.ZeroServicePort(port):
				drop = append(drop, i)
			case app.ZeroTargetPort(port):
				p = append(p, Op{Kind: OpRemove, Path: fieldpath.Key(fieldpath.Index("spec.ports", i), "targetPort")})
			}
		}
		if len(drop) > 0 {
			p = append(p, Op{Kind: OpDrop, Path: "spec.ports", Indexes: drop, When: KeepEmpty})
		}
		if len(p) > 0 {
			out = append(out, Edit{Object: svc, Plan: p})
		}
	}
	return out
}
