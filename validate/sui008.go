package validate

import (
	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RuntimeContainer finds the runtime among the Pod's init containers (where the native
// sidecar lives); index -1 when absent.
func RuntimeContainer(a *app.App) (int, *yaml.Node) {
	for i, c := range yamlx.Items(yamlx.Get(a.Pod.YNode(), "spec", "initContainers")) {
		if yamlx.GetStr(c, "name") == sidecar.ContainerName {
			return i, c
		}
	}
	return -1, nil
}

// checkSUI008: a selectorless UI Service nobody binds never serves anything.
func checkSUI008(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || !a.Settings.UIEnabled {
			continue
		}
		if _, c := RuntimeContainer(a); c == nil {
			out = append(out, Finding{Object: a.Pod, Field: "spec.initContainers",
				Msg: "the UI Service " + a.UIServiceName + " has no runtime to bind it: the driver Pod has no " + sidecar.ContainerName + " sidecar"})
		}
	}
	return out
}
