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
	Catches:  "A kubeflow SparkApplication or ScheduledSparkApplication, or an Apache SparkApplication (spark.apache.org/v1, v1beta1), whose spec.sparkConf sets spark.kubernetes.driver.podTemplateFile.",
	Why: "Both operators replace the key with a file they write from the pod template sparkui puts the sidecar in. kubeflow passes its own --conf spark.kubernetes.driver.podTemplateFile (written from spec.driver.template) after the sparkConf ones, and spark-submit keeps the last: since v2.4 it always does (internal/controller/sparkapplication/submission.go driverPodTemplateOption), in v2.1–v2.3 whenever driver.template is set, which sparkui's template injection does. " +
		"The Apache operator, whenever spec.driverSpec.podTemplateSpec is set (which sparkui always does), writes that template to a temporary file and sets the key to it in its conf overrides (SparkAppResourceSpecFactory.java getOrCreateLocalFileForDriverSpec), which SparkAppSubmissionWorker.java buildDriverConf applies after spec.sparkConf. The file's content never reaches the driver.",
	Fix: "Move the file's pod template into spec.driver.template (kubeflow) or spec.driverSpec.podTemplateSpec (Apache) and remove the key.",
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
	Admission: []AdmissionPolicy{
		{Name: "kubeflow", Group: kubeflowGroup, Versions: []string{"v1beta2"}, Resources: []string{"sparkapplications"},
			Validations: []string{celNoConfKey("object.spec", app.KeyPodTemplateFile)}},
		{Name: "kubeflow-scheduled", Group: kubeflowGroup, Versions: []string{"v1beta2"}, Resources: []string{"scheduledsparkapplications"},
			Validations: []string{`!has(object.spec.template) || ` + celNoConfKey("object.spec.template", app.KeyPodTemplateFile)}},
		{Name: "apache", Group: "spark.apache.org", Versions: []string{"v1", "v1beta1"}, Resources: []string{"sparkapplications"},
			Validations: []string{`!has(object.spec) || ` + celNoConfKey("object.spec", app.KeyPodTemplateFile)}},
	},
}

func checkSUI034(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.IsPod() {
			continue
		}
		f, ok := a.Props[app.KeyPodTemplateFile]
		if !ok {
			continue
		}
		var msg string
		switch a.Carrier.Kind {
		case app.KindKubeflow:
			msg = " is overridden by the operator's own template file (always since v2.4, and whenever spec.driver.template is set): move its content into spec.driver.template"
		case app.KindApache:
			// The Apache operator only checks its own overrides for an existing file, never
			// spec.sparkConf (SparkAppResourceSpecFactory.java getOrCreateLocalFileForDriverSpec),
			// and its overrides are set after sparkConf (SparkAppSubmissionWorker.java
			// buildDriverConf): with a podTemplateSpec, which sparkui always writes, the user's
			// file is never read.
			msg = " is overridden by the file the Apache operator writes from spec.driverSpec.podTemplateSpec, which sparkui uses for the sidecar: move its content into spec.driverSpec.podTemplateSpec"
		default:
			continue
		}
		out = append(out, Finding{Object: a.Pod, Field: fieldpath.Key(a.Carrier.ConfPath, app.KeyPodTemplateFile),
			Msg: "spark.kubernetes.driver.podTemplateFile=" + f + msg})
	}
	return out
}

// celNoConfKey: the sparkConf under spec (a CEL path) does not set key.
func celNoConfKey(spec, key string) string {
	return "!has(" + spec + ".sparkConf) || !('" + key + "' in " + spec + ".sparkConf)"
}
