package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI034: spark.kubernetes.driver.podTemplateFile in a kubeflow sparkConf.
var SUI034 = Rule{
	ID:       "SUI034",
	Severity: framework.Warning,
	Title:    "spark.kubernetes.driver.podTemplateFile in a kubeflow sparkConf is overridden",
	Name:     "KubeflowPodTemplateFile",
	Catches:  "A kubeflow SparkApplication or ScheduledSparkApplication whose spec.sparkConf sets spark.kubernetes.driver.podTemplateFile.",
	Why:      "The operator passes its own --conf spark.kubernetes.driver.podTemplateFile (written from spec.driver.template) after the sparkConf ones, and spark-submit keeps the last: since v2.4 it always does (internal/controller/sparkapplication/submission.go driverPodTemplateOption), in v2.1–v2.3 whenever driver.template is set, which sparkui's template route does. The file's content never reaches the driver.",
	Fix:      "Move the file's pod template into spec.driver.template and remove the key.",
	Failing: `spec:
  sparkConf:
    spark.kubernetes.driver.podTemplateFile: /opt/templates/driver.yaml   # SUI034
`,
	Passing: `spec:
  driver:
    template:
      spec:
        nodeSelector: {pool: spark}
`,
	Check: checkSUI034,
}

func checkSUI034(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.IsPod() || a.Carrier.Kind != app.KindKubeflow {
			continue
		}
		if f, ok := a.Props[app.KeyPodTemplateFile]; ok {
			out = append(out, Finding{Object: a.Pod, Field: a.ConfField(app.KeyPodTemplateFile),
				Msg: "spark.kubernetes.driver.podTemplateFile=" + f + " is overridden by the operator's own template file (always since v2.4, and whenever spec.driver.template is set): move its content into spec.driver.template"})
		}
	}
	return out
}
