package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
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
	Admission: []AdmissionPolicy{
		{Name: "deployment", Group: "apps", Versions: []string{"v1"}, Resources: []string{"deployments"},
			Conditions:  []AdmissionCondition{{"driver-template", celTemplateIsDriver}},
			Validations: []string{`has(object.spec.strategy) && has(object.spec.strategy.type) && object.spec.strategy.type != 'RollingUpdate'`}},
		{Name: "cronjob", Group: "batch", Versions: []string{"v1"}, Resources: []string{"cronjobs"},
			Conditions:  []AdmissionCondition{{"driver-template", celCronJobTemplateIsDriver}},
			Validations: []string{`has(object.spec.concurrencyPolicy) && object.spec.concurrencyPolicy != 'Allow'`}},
		{Name: "kubeflow-scheduled", Group: kubeflowGroup, Versions: []string{"v1beta2"}, Resources: []string{"scheduledsparkapplications"},
			Validations: []string{`!has(object.spec.concurrencyPolicy) || object.spec.concurrencyPolicy != 'Allow'`}},
	},
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
