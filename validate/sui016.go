package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SUI016: the driver Pod has no serviceAccountName.
var SUI016 = Rule{
	ID:       "SUI016",
	Severity: framework.Warning,
	Title:    "the driver Pod has no serviceAccountName",
	Name:     "NoServiceAccount",
	Catches:  "A driver Pod that names no serviceAccountName.",
	Why:      "The driver runs as the namespace's default ServiceAccount, which then receives the runtime's grant: every Pod of the namespace that names no ServiceAccount gets it too.",
	Fix:      "Set spark.kubernetes.authenticate.driver.serviceAccountName to a ServiceAccount of the driver's own.",
	Failing: `kind: Pod
spec:
  containers: [{name: spark-kubernetes-driver}]   # no serviceAccountName: SUI016 spec.serviceAccountName
`,
	Passing: `spec:
  serviceAccountName: spark   # (the deprecated serviceAccount: spark counts too)
`,
	Check: checkSUI016,
}

// checkSUI016: without a serviceAccountName the driver runs as "default", and the grant
// sparkui creates goes to every Pod in the namespace that does the same.
func checkSUI016(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.ServiceAccount == "" {
			f := Finding{Object: a.Object, Field: "spec.serviceAccountName",
				Msg: "the driver Pod names no ServiceAccount: it runs as \"default\", which then gets the runtime's grant; set spark.kubernetes.authenticate.driver.serviceAccountName"}
			if !a.IsSubmitOutput() {
				f.Field = a.ServiceAccountField()
				f.Msg = "the driver names no ServiceAccount: it runs as \"default\", which then gets the runtime's grant; set " + f.Field
			}
			out = append(out, f)
		}
	}
	return out
}
