package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/sparkconf"
)

// SUI022: client mode under hostNetwork with nothing that proves the UI's identity.
var SUI022 = Rule{
	ID:       "SUI022",
	Severity: framework.Error,
	Title:    "client mode under hostNetwork with no spark.app.id and no spark.kubernetes.driver.pod.name",
	Name:     "ClientModeHostNetworkIdentity",
	Catches:  "A client-mode driver (spark.submit.deployMode=client; driver-only mode counts as cluster mode here) with hostNetwork: true whose Spark conf sets neither spark.app.id nor spark.kubernetes.driver.pod.name.",
	Why:      "Under hostNetwork every UI on the node is a candidate, so the runtime binds only a UI that proves it is this application's: its id equals spark.app.id, or its environment's spark.kubernetes.driver.pod.name is this Pod. In client mode Spark reports spark.app.id if set, else spark-application-<millis> (core's SparkContext.scala), and sets no Pod name: the runtime can never prove it and never binds.",
	Fix:      "Set spark.app.id to the value the error names (the driver's spark-app-selector label), or spark.kubernetes.driver.pod.name to the Pod's name (e.g. --conf spark.kubernetes.driver.pod.name=$(POD_NAME) with POD_NAME from the downward API).",
	Failing: `kind: Pod
spec:
  hostNetwork: true   # SUI022 spec.hostNetwork
# Spark conf: spark.submit.deployMode=client, no spark.app.id, no spark.kubernetes.driver.pod.name
`,
	Passing: `# Spark conf: spark.submit.deployMode=client, spark.app.id=jupyter-…
`,
	Check: checkSUI022,
}

// checkSUI022: a client-mode UI on the node's network cannot be told from another driver's
// or a History Server's unless the conf gives the runtime something to compare.
func checkSUI022(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		s := a.Settings
		if !s.UIEnabled || !a.HostNetwork || !s.ClientMode || s.DriverOnly {
			continue
		}
		if a.Props[sparkconf.KeyAppID] != "" || a.Props[sparkconf.KeyPodName] != "" {
			continue
		}
		out = append(out, Finding{Object: a.Object, Field: "spec.hostNetwork",
			Msg: "client mode under hostNetwork, and the Spark conf (" + string(a.ConfSource) + ") sets neither " + sparkconf.KeyAppID + " nor " + sparkconf.KeyPodName +
				": Spark reports spark-application-<millis>, so the runtime cannot prove which UI on the node is this application's and never binds; set " +
				sparkconf.KeyAppID + "=" + a.AppID + " or " + sparkconf.KeyPodName + " to the Pod's name"})
	}
	return out
}
