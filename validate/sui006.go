package validate

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SUI006: a UI Service name is invalid or collides with another Service.
var SUI006 = Rule{
	ID:       "SUI006",
	Severity: framework.Error,
	Title:    "a UI Service name is invalid or collides with another Service",
	Name:     "UIServiceName",
	Catches:  "A UI Service name that is not a DNS-1035 label, that another Service in the same namespace of the input also has, or that an operator will give one of its Services for a resource in the input (kubeflow: <app>-ui-svc of a SparkApplication <app>).",
	Why:      "An invalid name is rejected by the API server; a shared name makes one apply overwrite the other Service, breaking whichever was there first; an operator overwrites a Service of its name at run time (the runtime then refuses to bind it, and the UI is unreachable).",
	Fix:      "Let sparkui-fn name it (<prefix>-ui-svc, or a deterministic hashed name when that is taken, too long or invalid), or rename the Service, the Role's resourceNames and the runtime's --service together.",
	Failing: `kind: Service    # sparkui's UI Service
metadata: {name: wordcount-5b2d0c9e1f3a7b64-ui-svc, namespace: analytics}   # SUI006 metadata.name
---
kind: Service    # an operator's Service of the same name
metadata: {name: wordcount-5b2d0c9e1f3a7b64-ui-svc, namespace: analytics}
`,
	Passing: `kind: Service    # what sparkui-fn names it when <prefix>-ui-svc is taken
metadata: {name: wordcount-5b2d0c9e1f3a7b64-f5506757-ui-svc, namespace: analytics}
`,
	Check: checkSUI006,
}

// checkSUI006: an invalid name is refused by the API server; a clash overwrites another
// Service on apply.
func checkSUI006(ctx *Context) []Finding {
	var out []Finding
	count := map[[2]string]int{}
	for ns, svcs := range ctx.Model.Services {
		for _, s := range svcs {
			_, n := metaName(s)
			count[[2]string{ns, n}]++
		}
	}
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		ns, name := metaName(a.UIService)
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
			out = append(out, Finding{Object: a.UIService, Field: "metadata.name",
				Msg: "UI Service name " + quote(name) + " is not a valid DNS-1035 label: " + strings.Join(errs, "; ")})
		}
		if count[[2]string{ns, name}] > 1 {
			out = append(out, Finding{Object: a.UIService, Field: "metadata.name",
				Msg: "UI Service name " + quote(name) + " is also the name of another Service in the input"})
		}
		if who := ctx.Model.OperatorServices[ns][name]; who != "" {
			out = append(out, Finding{Object: a.UIService, Field: "metadata.name",
				Msg: "UI Service name " + quote(name) + " is " + who + ": the operator overwrites that Service's ports, selector, labels and owner; " +
					"run sparkui-fn in transform mode, which renames it to " + quote(a.UIServiceName) + " (with its Role and the runtime's --service)"})
		}
	}
	return out
}
