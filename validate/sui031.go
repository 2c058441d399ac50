package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sparkconf"
)

// SUI031: spark.ui.port=0 in an operator resource.
var SUI031 = Rule{
	ID:       "SUI031",
	Severity: framework.Error,
	Title:    "spark.ui.port=0 in a Spark operator resource",
	Name:     "OperatorRandomUIPort",
	Catches:  "A kubeflow SparkApplication/ScheduledSparkApplication, an Apache SparkApplication or a Stackable SparkApplication whose spec.sparkConf sets spark.ui.port to 0.",
	Why:      "The operator has Spark build the driver Pod from the resource, and Spark declares the UI's containerPort from spark.ui.port (BasicDriverFeatureStep): containerPort 0, which the API server rejects, so the driver is never created. sparkui cannot fix that Pod: it does not exist in the manifests. The kubeflow operator's own UI Service would target port 0 too.",
	Fix:      "Use a fixed port (e.g. 4040). Under hostNetwork, where two drivers on one node would collide, Spark moves to port+1 … port+spark.port.maxRetries, and the runtime follows it there: a fixed port is enough.",
	Failing: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
spec:
  sparkConf:
    spark.ui.port: "0"   # SUI031 spec.sparkConf["spark.ui.port"]
`,
	Passing: `  sparkConf:
    spark.ui.port: "4040"
`,
	Check: checkSUI031,
	// spark.ui.port is read as Spark reads it (a 32-bit integer: sign and leading zeros
	// allowed); only the resource's own sparkConf is looked at (a conf in a ConfigMap it
	// names is another object).
	Admission: sparkConfPolicies(app.CapSparkSubmitsFromConf, "", celNoZeroUIPort),
}

// checkSUI031: only the operators' resources; for a spark-submit Pod the function drops the
// zero ports (SUI001/SUI002), and a workload's template declares its own ports.
func checkSUI031(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Carrier.Has(app.CapSparkSubmitsFromConf) {
			continue
		}
		if _, ok := a.Props[sparkconf.KeyUIPort]; ok && a.Settings.UIPort == 0 {
			out = append(out, Finding{Object: a.Object, Field: a.ConfField(sparkconf.KeyUIPort),
				Msg: "spark.ui.port=0: Spark declares the driver's UI containerPort 0 from it and the API server rejects the driver Pod; use a fixed port (under hostNetwork the runtime follows Spark to port+N, up to spark.port.maxRetries)"})
		}
	}
	return out
}

// celNoZeroUIPort: the sparkConf under spec (a CEL path) does not set spark.ui.port to 0.
func celNoZeroUIPort(spec string) string {
	return "!has(" + spec + ".sparkConf) || !('spark.ui.port' in " + spec + ".sparkConf) || !" + spec + ".sparkConf['spark.ui.port'].matches('^[+-]?0+$')"
}
