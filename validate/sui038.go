package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI038: a History Server run as an application is left alone.
var SUI038 = Rule{
	ID:       "SUI038",
	Severity: framework.Info,
	Title:    "a Spark History Server is left alone",
	Name:     "HistoryServerLeftAlone",
	Catches:  "A Spark operator resource whose mainClass is org.apache.spark.deploy.history.HistoryServer, or a driver workload whose container runs it (that class, or start-history-server.sh).",
	Why:      "A History Server answers the REST API for many applications: it is no driver's UI, the runtime would never find a live application UI there, so sparkui adds nothing for it.",
	Fix:      "Nothing to fix: the finding is information. Expose the History Server with a Service of your own.",
	Failing: `kind: SparkApplication
spec:
  mainClass: org.apache.spark.deploy.history.HistoryServer   # SUI038 (info)
`,
	Passing: `spec:
  mainClass: org.apache.spark.examples.SparkPi
`,
	Check: checkSUI038,
}

func checkSUI038(ctx *Context) []Finding {
	var out []Finding
	for _, c := range ctx.Model.HistoryServers {
		out = append(out, Finding{Object: c.Object, Field: c.MainClassPath,
			Msg: objName(c.Object) + " runs a Spark History Server (" + app.HistoryServerClass + "), not a driver: left alone, no UI Service or runtime added"})
	}
	return out
}
