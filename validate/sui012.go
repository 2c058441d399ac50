package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI012: an externally exposed UI Service outlives its driver.
var SUI012 = Rule{
	ID:       "SUI012",
	Severity: framework.Warning,
	Title:    "an externally exposed UI Service outlives its driver",
	Name:     "ExposedUIServiceOutlivesDriver",
	Catches:  "A NodePort or LoadBalancer UI Service while spark.kubernetes.driver.service.deleteOnTermination=false.",
	Why:      "Spark then leaves its Services behind when the application ends: the UI Service keeps holding a node port or a cloud load balancer for an application that is gone.",
	Fix:      "Keep deleteOnTermination at its default (true), use type ClusterIP, or delete the Services yourself when the application ends.",
	Failing: `kind: ConfigMap
data:
  spark.properties: |
    spark.kubernetes.driver.service.deleteOnTermination=false
---
kind: Service    # the UI Service
spec: {type: NodePort}   # SUI012 spec.type
`,
	PassingNote: "The same Service with `deleteOnTermination` left at its default (true), or of type `ClusterIP`.",
	Check:       checkSUI012,
}

// checkSUI012: Spark keeps its Services when deleteOnTermination=false; a NodePort or
// LoadBalancer UI Service then holds a node port or a load balancer after the app is gone.
func checkSUI012(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || a.Settings.DeleteOnTermination {
			continue
		}
		if t := yamlx.GetStr(a.UIService.YNode(), "spec", "type"); t == "NodePort" || t == "LoadBalancer" {
			out = append(out, Finding{Object: a.UIService, Field: "spec.type",
				Msg: "a " + t + " UI Service with " + sparkconf.KeyDeleteOnTermination + "=false keeps its node port or load balancer after the application ends"})
		}
	}
	return out
}
