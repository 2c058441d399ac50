package validate

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

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
	}
	return out
}
