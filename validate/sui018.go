package validate

import (
	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
)

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
		out = append(out, Finding{Object: a.Pod, Field: "spec.volumes[" + itoa(a.ConfVolume) + "].configMap.name",
			Msg: "volume " + names.SparkConfVolume + " mounts ConfigMap " + a.MissingConfigMap + ", which is not in the input: the UI settings come from " + src + "; include the ConfigMap (or set spec.sparkConf) so the UI Service and the runtime match what the driver reads"})
	}
	return out
}
