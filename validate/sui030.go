package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SUI030: a carrier's field has the wrong shape.
var SUI030 = Rule{
	ID:       "SUI030",
	Severity: framework.Error,
	Title:    "a Spark operator resource, driver workload or driver Pod has a field of the wrong shape",
	Name:     "CarrierFieldShape",
	Catches:  "A kubeflow SparkApplication/ScheduledSparkApplication, an Apache SparkApplication, a driver workload (pod template labelled spark-role=driver) or a spark-submit driver Pod in which a field sparkui reads or writes has another shape than its schema's: a sparkConf that is a list, a driver template that is a string, containers, initContainers or volumes that are a mapping, a driver container's volumeMounts that are a mapping or a string, its lifecycle that is a string or a list, a replicas that is not an integer. Raised too, for any object, when it is no Kubernetes object (no apiVersion or kind, or not a mapping) or its metadata or metadata.annotations is not a mapping (fn/krmio/screen.go): such an object is written back exactly as it came.",
	Why:      "The API server refuses such an object (or, inside kubeflow's unvalidated driver.template, Spark fails to load the template when the operator submits): nothing sparkui could add would reach a driver, and writing its additions would replace what the field holds. sparkui leaves the object exactly as it is and adds nothing for it.",
	Fix:      "Correct the field named in the result to the shape the operator's CRD (or the workload's API) gives it.",
	Failing: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
spec:
  sparkConf: [spark.ui.port=4045]   # SUI030 spec.sparkConf
`,
	Passing: `  sparkConf:
    spark.ui.port: "4045"
`,
	Check: checkSUI030,
}

// checkSUI030 reports the carriers app.Build could not read (app.Model.CarrierErrors).
func checkSUI030(ctx *Context) []Finding {
	var out []Finding
	for _, e := range ctx.Model.CarrierErrors {
		msg := e.Err.Msg
		if e.Err.Field != "" {
			msg = e.Err.Field + " " + msg
		}
		out = append(out, Finding{Object: e.Object, Field: e.Err.Field,
			Msg: objName(e.Object) + ": " + msg + "; sparkui adds nothing for it"})
	}
	return out
}
