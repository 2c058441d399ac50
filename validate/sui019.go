package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI019: an object appears twice in the input.
var SUI019 = Rule{
	ID:       "SUI019",
	Severity: framework.Error,
	Title:    "an object appears twice in the input",
	Name:     "DuplicateObject",
	Catches:  "Two objects of the same kind, API group, namespace and name in one input (core v1 and RBAC kinds, and every carrier kind: kubeflow and Apache SparkApplications — v1 and v1beta1 are one object —, ScheduledSparkApplications, Deployments, StatefulSets, Jobs, CronJobs), for instance a kpt package holding a rendered copy of itself.",
	Why:      "Applied, the later silently replaces the earlier; sparkui cannot tell which one is meant, so its rewrite and its other findings may be about the copy that will not exist. Of a carrier only the first copy is rewritten (one UI Service, one runtime); the later copy is written back as it came.",
	Fix:      "Keep one copy: remove the duplicate file, or keep rendered output out of the package (.krmignore).",
	Failing: `kind: ConfigMap
metadata: {name: spark-drv-9c1e7b3a5d2f4086-conf-map, namespace: analytics}
---
kind: ConfigMap
metadata: {name: spark-drv-9c1e7b3a5d2f4086-conf-map, namespace: analytics}   # again: SUI019 metadata.name
`,
	Passing: `kind: ConfigMap
metadata: {name: spark-drv-9c1e7b3a5d2f4086-conf-map, namespace: analytics}
---
kind: ConfigMap
metadata: {name: spark-drv-9c1e7b3a5d2f4086-conf-map, namespace: staging}     # another object
`,
	Check: checkSUI019,
}

// checkSUI019: a duplicate object makes everything said about "the" object ambiguous, and the
// API server keeps only the last one applied. A clash with a UI Service's name is SUI006's.
func checkSUI019(ctx *Context) []Finding {
	ui := map[[2]string]bool{}
	for _, a := range ctx.Model.Apps {
		if a.UIService != nil {
			ns, name := metaName(a.UIService)
			ui[[2]string{ns, name}] = true
		}
	}
	var out []Finding
	for _, d := range ctx.Model.Duplicates {
		if ns, name := metaName(d); yamlx.GetStr(d.YNode(), "kind") == "Service" && ui[[2]string{ns, name}] {
			continue
		}
		out = append(out, Finding{Object: d, Field: "metadata.name",
			Msg: objName(d) + " appears more than once in the input: applied, the later copy replaces the earlier; keep one"})
	}
	return out
}
