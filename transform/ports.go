package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// ZeroContainerPort reports whether a containerPort entry is one the API server rejects for
// being 0 (spark.ui.port=0 writes exactly that) or missing.
func ZeroContainerPort(p *yaml.Node) bool {
	n, ok := yamlx.Int(yamlx.Get(p, "containerPort"))
	return !ok || n == 0
}

// ZeroServicePort reports whether a Service port entry has port 0 (or none).
func ZeroServicePort(p *yaml.Node) bool {
	n, ok := yamlx.Int(yamlx.Get(p, "port"))
	return !ok || n == 0
}

// ZeroTargetPort reports whether a Service port entry has an explicit targetPort 0.
func ZeroTargetPort(p *yaml.Node) bool {
	t := yamlx.Get(p, "targetPort")
	if t == nil {
		return false
	}
	n, ok := yamlx.Int(t)
	return ok && n == 0
}

// IsUIContainerPort reports whether a driver containerPort is the UI's: Spark names it
// spark-ui; a hand-written Pod may only match by number.
func IsUIContainerPort(a *app.App, p *yaml.Node) bool {
	if yamlx.GetStr(p, "name") == names.UIPortName {
		return true
	}
	n, ok := yamlx.Int(yamlx.Get(p, "containerPort"))
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
			return !ZeroContainerPort(p) && !(a.HostNetwork && IsUIContainerPort(a, p))
		})
		if ports != nil && ports.Kind == yaml.SequenceNode && len(ports.Content) == 0 {
			yamlx.Delete(c, "ports")
		}
	}
	for _, svc := range a.Services {
		ports := yamlx.Get(svc.YNode(), "spec", "ports")
		yamlx.Filter(ports, func(p *yaml.Node) bool { return !ZeroServicePort(p) })
		for _, p := range yamlx.Items(ports) {
			if ZeroTargetPort(p) {
				yamlx.Delete(p, "targetPort")
			}
		}
	}
}
