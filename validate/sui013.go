package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/sparkconf"
)

// SUI013: driver-only or client mode detected.
var SUI013 = Rule{
	ID:       "SUI013",
	Severity: framework.Info,
	Title:    "driver-only or client mode detected",
	Name:     "DriverOnlyOrClientMode",
	Catches:  "Driver-only mode (spark.kubernetes.driver.master=local...) or client mode (spark.submit.deployMode=client).",
	Why:      "Both are supported; the note says which identity the runtime checks: in driver-only mode Spark 3.x reports a local-<millis> application id (Spark 4.0+ reports spark.app.id, SPARK-45948), and in client mode spark.app.id if set, else spark-application-<millis>; on the Pod network any live application UI of the Pod is this one, under hostNetwork the runtime needs the id or the Pod name (SUI022, SUI023).",
	Fix:      "Nothing to fix: the finding is information.",
	Failing: `kind: ConfigMap
data:
  spark.properties: |
    spark.kubernetes.driver.master=local[*]   # SUI013 (info) on the Pod
`,
	Passing: `    spark.submit.deployMode=cluster
`,
	Check: checkSUI013,
}

// checkSUI013: noted so a reader of the results knows which identity the runtime will use
// (in driver-only mode Spark 3.x reports a local-… id, so it may match on the Pod name).
func checkSUI013(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		switch {
		case a.Settings.DriverOnly:
			out = append(out, Finding{Object: a.Object,
				Msg: "driver-only mode (" + sparkconf.KeyDriverMaster + "=" + a.Props[sparkconf.KeyDriverMaster] + "): supported; Spark 3.x reports a local-<millis> id (Spark 4.0+ spark.app.id, SPARK-45948), so under hostNetwork the runtime may have to identify the UI by the Pod name"})
		case a.Settings.ClientMode:
			out = append(out, Finding{Object: a.Object, Msg: "client mode (" + sparkconf.KeyDeployMode + "=client): supported"})
		}
	}
	return out
}
