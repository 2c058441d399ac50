package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI036: two drivers of one carrier can overlap.
var SUI036 = Rule{
	ID:       "SUI036",
	Severity: framework.Warning,
	Title:    "two drivers of one application can run at once",
	Name:     "OverlappingDrivers",
	Catches:  "A driver Deployment with the RollingUpdate strategy (the default), a driver CronJob with concurrencyPolicy Allow (the default), or a kubeflow ScheduledSparkApplication with concurrencyPolicy Allow.",
	Why:      "A rolling update starts the new driver before the old one stops; Allow starts the next run while the last one still runs. Both drivers share the one UI Service: it serves whichever bound last, and the runtime's guard keeps the old one's withdrawal from unbinding the new, but during the overlap the Service shows the newer UI only.",
	Fix:      "Deployment: strategy.type: Recreate. CronJob, ScheduledSparkApplication: concurrencyPolicy: Forbid (or Replace).",
	Failing: `kind: CronJob
spec:
  schedule: "0 2 * * *"   # SUI036 spec.concurrencyPolicy (Allow by default)
`,
	Passing: `spec:
  concurrencyPolicy: Forbid
`,
	Check: checkSUI036,
	// A warning: the policies' bindings warn (validationActions Warn). The API server has
	// defaulted strategy.type and a CronJob's concurrencyPolicy by the time they run; the
	// kubeflow CRD has no default, and an unset policy is not Allow there.
	Admission: carrierPolicies(0, "", func(t app.AdmissionTarget) string { return celNoOverlap(t.Overlap) }),
}

// celNoOverlap: the overlap field o (nil: none, "") does not let runs overlap. The API
// server has set a defaulted field by the time the policy runs, so an unset one is taken as
// overlapping; any other means no overlap when unset. The steps below object.spec are tested
// one by one: CEL refuses a field of an absent one.
func celNoOverlap(o *app.AdmissionOverlap) string {
	if o == nil {
		return ""
	}
	var has, hasNot []string
	for i, steps := 3, strings.Split(o.Field, "."); i <= len(steps); i++ {
		has = append(has, "has("+strings.Join(steps[:i], ".")+")")
		hasNot = append(hasNot, "!"+has[len(has)-1])
	}
	differs := o.Field + " != '" + o.Overlaps + "'"
	if o.Defaulted {
		return strings.Join(append(has, differs), " && ")
	}
	return strings.Join(append(hasNot, differs), " || ")
}

func checkSUI036(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if o := a.Carrier.Overlap; o != nil {
			out = append(out, Finding{Object: a.Object, Field: o.Field, Msg: o.Msg})
		}
	}
	return out
}
