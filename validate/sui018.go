package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
)

// SUI018: the driver's spark.properties ConfigMap is not in the input.
var SUI018 = Rule{
	ID:       "SUI018",
	Severity: framework.Warning,
	Title:    "the driver's spark.properties ConfigMap is not in the input",
	Name:     "MissingSparkConf",
	Catches:  "A driver Pod that mounts a spark.properties ConfigMap (volume spark-conf-volume-driver) the input does not hold.",
	Why:      "The UI port, retries and TLS then come from spec.sparkConf or Spark's defaults, which may not be what the driver reads: the UI Service and the runtime may target the wrong port.",
	Fix:      "Include the ConfigMap in the input (for instance in the same kustomization), or set spec.sparkConf to the driver's UI settings.",
	Failing: `kind: Pod
spec:
  volumes:
  - name: spark-conf-volume-driver
    configMap: {name: spark-drv-9c1e7b3a5d2f4086-conf-map}   # not in the input: SUI018 spec.volumes[0].configMap.name
`,
	PassingNote: "The ConfigMap `spark-drv-9c1e7b3a5d2f4086-conf-map` in the same input (after a kustomize `namePrefix`, kustomize's `internal.config.kubernetes.io/previousNames` annotation links the renamed one).",
	Check:       checkSUI018,
}

// checkSUI018: when the Pod mounts a Spark conf ConfigMap the input does not hold, the UI
// port, retries and TLS come from spec.sparkConf or Spark's defaults, which may not be what
// the driver will read: say so rather than guess silently.
func checkSUI018(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.MissingConfigMap == "" || a.ConfSource != app.FromFunctionConfig {
			continue
		}
		src := "Spark's defaults"
		if len(a.Props) > 0 {
			src = "functionConfig spec.sparkConf"
		}
		out = append(out, Finding{Object: a.Object, Field: "spec.volumes[" + itoa(a.ConfVolume) + "].configMap.name",
			Msg: "volume " + names.SparkConfVolume + " mounts ConfigMap " + a.MissingConfigMap + ", which is not in the input: the UI settings come from " + src + "; include the ConfigMap (or set spec.sparkConf) so the UI Service and the runtime match what the driver reads"})
	}
	return out
}
