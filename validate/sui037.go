package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI037: client mode where the operator rejects it.
var SUI037 = Rule{
	ID:       "SUI037",
	Severity: framework.Error,
	Title:    "client mode in an Apache SparkApplication",
	Name:     "ApacheClientMode",
	Catches:  "An Apache spark-kubernetes-operator SparkApplication with spec.deploymentMode: ClientMode.",
	Why:      "The operator fails such an application before building any driver (AppValidateStep.java: \"Client mode is not supported yet.\"): there is no driver whose UI the Service could serve.",
	Fix:      "Use deploymentMode: ClusterMode (the default), or run a client-mode driver as a workload (a StatefulSet or Deployment whose pod template is labelled spark-role=driver).",
	Failing: `apiVersion: spark.apache.org/v1
kind: SparkApplication
spec:
  deploymentMode: ClientMode   # SUI037 spec.deploymentMode
`,
	Passing: `spec:
  deploymentMode: ClusterMode
`,
	Check: checkSUI037,
	// The resources whose operator refuses client mode (the adapter's note), by the value of
	// their deploy mode field.
	Admission: carrierPolicies(0, "SUI037", func(t app.AdmissionTarget) string {
		if t.DeployMode == "" || t.ClientMode == "" {
			return ""
		}
		return t.Guard + "!has(" + t.DeployMode + ") || " + t.DeployMode + " != '" + t.ClientMode + "'"
	}),
}

func checkSUI037(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		msg := a.Carrier.Note("SUI037")
		if msg == "" || a.Carrier.DeployMode != "client" {
			continue
		}
		out = append(out, Finding{Object: a.Object, Field: strings.Join(a.Carrier.FieldPath(app.FieldDeployMode), "."), Msg: msg})
	}
	return out
}
