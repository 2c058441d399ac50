package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI011: hostNetwork: true with declared containerPorts.
var SUI011 = Rule{
	ID:       "SUI011",
	Severity: framework.Warning,
	Title:    "hostNetwork: true with declared containerPorts",
	Name:     "HostNetworkPorts",
	Catches:  "A driver Pod with hostNetwork: true whose containers declare ports.",
	Why:      "Under hostNetwork every declared containerPort is a hostPort: the scheduler will not put two drivers declaring the same one on one node.",
	Fix:      "Remove the declared ports (Spark binds them all the same) with a pod template or a patch; sparkui-fn drops the UI's.",
	Failing: `kind: Pod
spec:
  hostNetwork: true
  containers:
  - name: spark-kubernetes-driver
    ports: [{name: driver-rpc-port, containerPort: 7078}]   # SUI011 spec.containers[0].ports
`,
	Passing: `spec:
  hostNetwork: true
  containers:
  - name: spark-kubernetes-driver   # no ports declared
`,
	Check: checkSUI011,
	// The pod spec of every carrier whose adapter gives admission its path (driver Pods,
	// driver workloads' pod templates, the operators' driver templates), as the model reads
	// it: App.Containers, the pod spec's containers, and HostNetwork, the pod spec's or the
	// carrier's own field (kubeflow's driver.hostNetwork). On kubeflow's webhook injection
	// (a function setting) App.Containers is none and the function reports nothing; a policy
	// cannot know that setting and judges the template, which the operator uses on either.
	Admission: podSpecPolicies(0, celNoHostNetworkPorts),
}

// checkSUI011: under hostNetwork every declared containerPort becomes a hostPort, and two
// drivers declaring the same one cannot share a node.
func checkSUI011(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.HostNetwork {
			continue
		}
		cs, path := a.Containers()
		for i, c := range yamlx.Items(cs) {
			if len(yamlx.Items(yamlx.Get(c, "ports"))) > 0 {
				out = append(out, Finding{Object: a.Object, Field: path + "[" + itoa(i) + "].ports",
					Msg: "hostNetwork: true and container " + quote(yamlx.GetStr(c, "name")) + " declares ports: they become hostPorts, and drivers declaring the same port cannot share a node"})
			}
		}
	}
	return out
}

// celNoHostNetworkPorts: neither the pod spec at spec (a CEL path) nor the carrier's field
// hostNetwork (a CEL path, "" when none) puts the driver on the host network, or the pod
// spec's containers declare no port. An operator's template may leave containers out.
func celNoHostNetworkPorts(spec, hostNetwork string) string {
	off := "!has(" + spec + ".hostNetwork) || !" + spec + ".hostNetwork"
	if hostNetwork != "" {
		off = "(" + off + ") && (!has(" + hostNetwork + ") || !" + hostNetwork + ")"
	}
	return off + " || !has(" + spec + ".containers) || " + spec + ".containers.all(c, !has(c.ports) || size(c.ports) == 0)"
}
