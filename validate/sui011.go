package validate

import (
	"github.com/sparkui/sparkui/internal/yamlx"
)

// checkSUI011: under hostNetwork every declared containerPort becomes a hostPort, and two
// drivers declaring the same one cannot share a node.
func checkSUI011(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.HostNetwork {
			continue
		}
		for i, c := range yamlx.Items(yamlx.Get(a.Pod.YNode(), "spec", "containers")) {
			if len(yamlx.Items(yamlx.Get(c, "ports"))) > 0 {
				out = append(out, Finding{Object: a.Pod, Field: "spec.containers[" + itoa(i) + "].ports",
					Msg: "hostNetwork: true and container " + quote(yamlx.GetStr(c, "name")) + " declares ports: they become hostPorts, and drivers declaring the same port cannot share a node"})
			}
		}
	}
	return out
}
