package validate

import (
	"github.com/sparkui/sparkui/internal/app"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI005: the UI Service's IP families differ from the driver Service's.
var SUI005 = Rule{
	ID:       "SUI005",
	Severity: framework.Error,
	Title:    "the UI Service's IP families differ from the driver Service's",
	Name:     "UIServiceIPFamilies",
	Catches:  "A UI Service whose spec.ipFamilyPolicy or spec.ipFamilies (including their order) differ from the driver Service's.",
	Why:      "On a dual-stack cluster the UI Service's primary cluster IP is then of another family than the driver's address; on a single-stack cluster a family the cluster lacks is refused.",
	Fix:      "Copy ipFamilyPolicy and ipFamilies, in order, from the driver Service (spark.kubernetes.driver.service.ipFamilyPolicy and .ipFamilies); sparkui-fn does.",
	Failing: `kind: Service    # the driver Service
metadata: {name: wordcount-…-driver-svc}
spec: {clusterIP: None, ipFamilyPolicy: RequireDualStack, ipFamilies: [IPv6, IPv4]}
---
kind: Service    # the UI Service
metadata: {name: wordcount-…-ui-svc}
spec: {ipFamilyPolicy: RequireDualStack, ipFamilies: [IPv4, IPv6]}   # SUI005 spec.ipFamilies
`,
	Passing: `kind: Service    # the UI Service
spec: {ipFamilyPolicy: RequireDualStack, ipFamilies: [IPv6, IPv4]}
`,
	Check: checkSUI005,
}

// checkSUI005: a UI Service of another IP family than the driver Service cannot reach the
// driver's address (or is refused on a single-stack cluster).
func checkSUI005(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		ui := yamlx.Get(a.UIService.YNode(), "spec")
		if a.DriverService == nil {
			if a.IsSubmitOutput() {
				continue
			}
			// No driver Service before the run: Spark makes it from the conf's settings.
			want := app.WantIPFamilies(a)
			for _, k := range []string{"ipFamilyPolicy", "ipFamilies"} {
				if !yamlx.Equal(yamlx.Get(ui, k), yamlx.Get(want, k)) {
					out = append(out, Finding{Object: a.UIService, Field: "spec." + k,
						Msg: "spec." + k + " differs from what Spark gives the driver Service of " + objName(a.Object) + " (spark.kubernetes.driver.service.ipFamilyPolicy/ipFamilies): copy it"})
				}
			}
			continue
		}
		drv := yamlx.Get(a.DriverService.YNode(), "spec")
		_, drvName := metaName(a.DriverService)
		for _, k := range []string{"ipFamilyPolicy", "ipFamilies"} {
			if !yamlx.Equal(yamlx.Get(ui, k), yamlx.Get(drv, k)) {
				out = append(out, Finding{Object: a.UIService, Field: "spec." + k,
					Msg: "spec." + k + " differs from the driver Service " + drvName + "'s: copy it"})
			}
		}
	}
	return out
}
