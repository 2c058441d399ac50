package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
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

// DropZeroPorts removes the driver container's zero ports (and, under hostNetwork, its UI
// port, which would become a hostPort) and the zero ports of the Services selecting the
// driver. An explicit targetPort 0 on an otherwise valid Service port is removed, so it
// defaults to the port.
func DropZeroPorts(a *app.App) {
	if c := a.DriverContainerNode(); c != nil {
		ports := yamlx.Get(c, "ports")
		yamlx.Filter(ports, func(p *yaml.Node) bool {
			return !app.ZeroContainerPort(p) && !(a.HostNetwork && IsUIContainerPort(a, p))
		})
		if ports != nil && ports.Kind == yaml.SequenceNode && len(ports.Content) == 0 {
			yamlx.Delete(c, "ports")
		}
	}
	for _, svc := range a.Services {
		ports := yamlx.Get(svc.YNode(), "spec", "ports")
		yamlx.Filter(ports, func(p *yaml.Node) bool { return !app.ZeroServicePort(p) })
		for _, p := range yamlx.Items(ports) {
			if app.ZeroTargetPort(p) {
				yamlx.Delete(p, "targetPort")
			}
		}
	}
}
