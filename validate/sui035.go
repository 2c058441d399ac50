package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SUI035: a driver workload runs several drivers at once.
var SUI035 = Rule{
	ID:       "SUI035",
	Severity: framework.Error,
	Title:    "a driver workload runs more than one driver",
	Name:     "WorkloadReplicas",
	Catches:  "A Deployment or StatefulSet whose pod template is labelled spark-role=driver with spec.replicas > 1, or such a Job (or CronJob job template) with parallelism > 1.",
	Why:      "Each Pod is a driver with its own UI, and the UI Service routes to one port of the Pods its selector matches: the runtimes of the replicas bind it in turn and a request reaches any of them. One Service cannot serve several UIs.",
	Fix:      "Run one driver per workload (replicas: 1, parallelism: 1), or one workload per driver.",
	Failing: `kind: StatefulSet
spec:
  replicas: 3   # SUI035 spec.replicas
`,
	Passing: `spec:
  replicas: 1
`,
	Check: checkSUI035,
	// The API server defaults replicas and parallelism to 1; scaling through the scale
	// subresource (kubectl scale, an autoscaler) is not matched.
	Admission: replicasPolicies(0, func(f string) string { return "!has(" + f + ") || " + f + " <= 1" }),
}

func checkSUI035(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		// Replicas is more than 1 only where the carrier runs several driver Pods at once.
		if a.Carrier.Replicas <= 1 {
			continue
		}
		out = append(out, Finding{Object: a.Object, Field: a.Carrier.ReplicasPath,
			Msg: a.Carrier.ReplicasPath + " is " + itoa(a.Carrier.Replicas) + ": every Pod is a driver with its own UI, and one UI Service cannot route to several; run one driver per workload"})
	}
	return out
}
