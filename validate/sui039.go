package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SUI039: the kubeflow template injection for a Spark 2 application.
var SUI039 = Rule{
	ID:       "SUI039",
	Severity: framework.Error,
	Title:    "kubeflow driver template for a Spark version below 3",
	Name:     "KubeflowTemplateSparkVersion",
	Catches:  "A kubeflow SparkApplication or ScheduledSparkApplication on the template injection (kubeflow.injection: template, the default) whose spec.sparkVersion is below 3.",
	Why:      "The operator's validating webhook refuses a driver template for such an application (internal/webhook/sparkapplication_validator.go: \"pod template feature requires Spark version 3.0.0 or higher\"), and Spark 2 cannot load one: the runtime sparkui put in spec.driver.template would never run.",
	Fix:      "Run the function with kubeflow.injection: webhook (ConfigMap key kubeflowInjection=webhook) for these applications, with the operator's mutating webhook on, or move the application to Spark 3.",
	Failing: `spec:
  sparkVersion: 2.4.8   # SUI039 spec.sparkVersion
  driver:
    template: {…}
`,
	Passing: `spec:
  sparkVersion: 3.5.5
`,
	Check: checkSUI039,
}

func checkSUI039(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Carrier.TemplateInjectionRefused() {
			continue
		}
		out = append(out, Finding{Object: a.Object, Field: a.Carrier.SparkVersionPath,
			Msg: "sparkVersion " + a.Carrier.SparkVersion + " is below 3: the operator refuses a driver template for it, so the runtime in spec.driver.template would never run; use kubeflow.injection: webhook for it"})
	}
	return out
}
