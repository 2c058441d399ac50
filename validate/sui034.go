package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
)

// SUI034: spark.kubernetes.driver.podTemplateFile in an operator's sparkConf, which the
// operator replaces with a file of its own.
var SUI034 = Rule{
	ID:       "SUI034",
	Severity: framework.Warning,
	Title:    "spark.kubernetes.driver.podTemplateFile in an operator's sparkConf is overridden",
	Name:     "OperatorPodTemplateFile",
	Catches:  "A kubeflow SparkApplication or ScheduledSparkApplication, an Apache SparkApplication (spark.apache.org/v1, v1beta1) or a Stackable SparkApplication (spark.stackable.tech/v1alpha1), whose spec.sparkConf sets spark.kubernetes.driver.podTemplateFile (the carriers whose adapter has a note for SUI034).",
	Why: "Both operators replace the key with a file they write from the pod template sparkui puts the sidecar in. kubeflow passes its own --conf spark.kubernetes.driver.podTemplateFile (written from spec.driver.template) after the sparkConf ones, and spark-submit keeps the last: since v2.4 it always does (internal/controller/sparkapplication/submission.go driverPodTemplateOption), in v2.1–v2.3 whenever driver.template is set, which sparkui's template injection does. " +
		"The Apache operator, whenever spec.driverSpec.podTemplateSpec is set (which sparkui always does), writes that template to a temporary file and sets the key to it in its conf overrides (SparkAppResourceSpecFactory.java getOrCreateLocalFileForDriverSpec), which SparkAppSubmissionWorker.java buildDriverConf applies after spec.sparkConf. The file's content never reaches the driver. " +
		"Stackable's operator is the other way round: it passes its own key (the template it builds from spec.driver.podOverrides) before the sparkConf entries (rust/operator-binary/src/crd/mod.rs build_command), so the user's file wins and the template carrying sparkui's runtime is never read.",
	Fix: "Move the file's pod template into spec.driver.template (kubeflow), spec.driverSpec.podTemplateSpec (Apache) or spec.driver.podOverrides (Stackable) and remove the key.",
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
	// A warning: the bindings warn. Only the resource's own sparkConf is read.
	Admission: sparkConfPolicies(0, "SUI034", func(spec string) string { return celNoConfKey(spec, app.KeyPodTemplateFile) }),
}

func checkSUI034(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		f, ok := a.Props[app.KeyPodTemplateFile]
		msg := a.Carrier.Note("SUI034")
		if !ok || msg == "" {
			continue
		}
		out = append(out, Finding{Object: a.Object, Field: fieldpath.Key(a.Carrier.ConfPath, app.KeyPodTemplateFile),
			Msg: "spark.kubernetes.driver.podTemplateFile=" + f + msg})
	}
	return out
}

// celNoConfKey: the sparkConf under spec (a CEL path) does not set key.
func celNoConfKey(spec, key string) string {
	return "!has(" + spec + ".sparkConf) || !('" + key + "' in " + spec + ".sparkConf)"
}
