package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
)

// SUI015: unreadable spark.properties or a bad UI setting.
var SUI015 = Rule{
	ID:       "SUI015",
	Severity: framework.Error,
	Title:    "unreadable spark.properties or a bad UI setting",
	Name:     "SparkProperties",
	Catches: "A driver spark.properties that cannot be parsed, or a setting sparkui reads that Spark refuses at start: a port it binds " +
		"(spark.ui.port while the UI is on, spark.ssl.ui.port while TLS is on, spark.driver.port, spark.blockManager.port, " +
		"spark.driver.blockManager.port, spark.connect.grpc.binding.port) that is not 0 (random) or 1024-65535, as Spark's " +
		"Utils.startServiceOnPort requires; spark.port.maxRetries below 0; spark.ssl.port or a disabled spark.ssl.ui.port that is " +
		"not an integer ≥ 0 (SSLOptions.parse on Spark 3.x); a TLS or UI switch that is not true or false. Each value is parsed " +
		"as its reader in Spark parses it (ConfigBuilder entries are trimmed, SparkConf's plain getters are not): docs/spark-conformance.md.",
	Why: "Spark fails at start on it, and sparkui cannot know which port the UI will bind (it assumes Spark's default for the rest).",
	Fix: "Correct the named key in the ConfigMap, or in spec.sparkConf.",
	Failing: `kind: ConfigMap
data:
  spark.properties: |
    spark.ui.port=40x0   # SUI015 data["spark.properties"]
`,
	Passing: `    spark.ui.port=4040
`,
	Check: checkSUI015,
}

// checkSUI015: an unreadable spark.properties or a bad port setting fails the driver at
// start (Spark throws on it), and sparkui cannot know which port to expect.
func checkSUI015(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.ConfError != nil && a.ConfigMap == nil {
			// A workload's mounted spark-defaults.conf (app.Carrier.ConfFile).
			out = append(out, Finding{Object: a.Object, Msg: "the Spark conf of " + objName(a.Object) + " is unreadable: " + a.ConfError.Msg})
		} else if a.ConfError != nil {
			out = append(out, Finding{Object: a.ConfigMap, Field: DataKeyPath(names.SparkPropertiesKey),
				Msg: "spark.properties of " + objName(a.ConfigMap) + " is unreadable: " + a.ConfError.Msg})
		}
		for _, e := range a.SettingErrors {
			if a.ConfSource == app.FromConfigMap {
				out = append(out, Finding{Object: a.ConfigMap, Field: DataKeyPath(names.SparkPropertiesKey),
					Msg: "in spark.properties of " + objName(a.ConfigMap) + ": " + e.Error()})
			} else if a.ConfSource == app.FromCarrier {
				out = append(out, Finding{Object: a.Object, Field: a.ConfField(e.Key),
					Msg: "in the Spark conf of " + objName(a.Object) + ": " + e.Error()})
			} else {
				out = append(out, Finding{Object: a.Object, Field: "",
					Msg: "functionConfig spec.sparkConf: " + e.Error()})
			}
		}
	}
	return out
}
