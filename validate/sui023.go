package validate

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/sparkconf"
)

// SUI023: the Pod or namespace name the runtime identifies the UI by would be redacted.
var SUI023 = Rule{
	ID:       "SUI023",
	Severity: framework.Warning,
	Title:    "spark.redaction.regex hides the Pod or namespace name the runtime identifies the UI by",
	Name:     "RedactedIdentity",
	Catches:  "Under hostNetwork, with no application id the runtime can use (client mode without spark.app.id, or driver-only mode, where Spark 3.x reports local-<millis>), a driver Pod or namespace name that spark.redaction.regex (default (?i)secret|password|token|access[.]?key) matches; also a spark.redaction.regex sparkui cannot evaluate (a Java-only construct).",
	Why:      "The runtime then proves the UI is this application's by spark.kubernetes.driver.pod.name and spark.kubernetes.namespace in Spark's /environment, whose values Spark replaces by *********(redacted) when the key or the value matches the pattern (core's util/Utils.scala redact): a redacted name proves nothing, and the runtime does not bind.",
	Fix:      "Set spark.app.id (the runtime then identifies the UI by its id), rename the Pod or namespace, or set spark.redaction.regex to a pattern that does not match them.",
	Failing: `kind: Pod
metadata:
  name: token-sync-0   # SUI023 metadata.name
spec:
  hostNetwork: true
# Spark conf: spark.submit.deployMode=client, spark.kubernetes.driver.pod.name=token-sync-0
`,
	Passing: `# Spark conf: spark.submit.deployMode=client, spark.app.id=token-sync-0
`,
	Check: checkSUI023,
}

// checkSUI023: identity by name needs the name to be readable in /environment.
func checkSUI023(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		s := a.Settings
		if !s.UIEnabled || !a.HostNetwork {
			continue
		}
		// Spark reports the id the runtime is given in cluster mode; in client mode only
		// when spark.app.id is set; in driver-only mode only from Spark 4.0 (SPARK-45948).
		idUsable := (!s.ClientMode && !s.DriverOnly) || (s.ClientMode && !s.DriverOnly && a.Props[sparkconf.KeyAppID] != "")
		if idUsable {
			continue
		}
		expr := sparkconf.RedactionRegex(a.Props)
		re, err := sparkconf.CompileRedaction(expr)
		if errors.Is(err, sparkconf.ErrJavaOnlyRegex) {
			out = append(out, Finding{Object: a.Object,
				Msg: sparkconf.KeyRedactionRegex + "=" + expr + " " + err.Error() + ": check that it does not match the driver Pod's name or namespace, which the runtime identifies the UI by under hostNetwork"})
			continue
		}
		if err != nil {
			continue // SUI015
		}
		for _, c := range []struct{ key, value, field, what string }{
			{sparkconf.KeyPodName, a.DriverPodName, "metadata.name", "the driver Pod's name"},
			{sparkconf.KeyNamespace, a.Namespace, "metadata.namespace", "the namespace"},
		} {
			if c.value == "" || !sparkconf.Redacted(re, c.key, c.value) {
				continue
			}
			out = append(out, Finding{Object: a.Object, Field: c.field,
				Msg: c.what + " " + c.value + " (" + c.key + ") is redacted in Spark's /environment by " + sparkconf.KeyRedactionRegex + "=" + expr +
					": under hostNetwork with no usable application id the runtime cannot prove the UI is this application's and does not bind; set " + sparkconf.KeyAppID + " or change the name or the pattern"})
		}
	}
	return out
}
