package validate

import "github.com/sparkui/sparkui/internal/yamlx"

// checkSUI019: a duplicate object makes everything said about "the" object ambiguous, and the
// API server keeps only the last one applied. A clash with a UI Service's name is SUI006's.
func checkSUI019(ctx *Context) []Finding {
	ui := map[[2]string]bool{}
	for _, a := range ctx.Model.Apps {
		if a.UIService != nil {
			ns, name := metaName(a.UIService)
			ui[[2]string{ns, name}] = true
		}
	}
	var out []Finding
	for _, d := range ctx.Model.Duplicates {
		if ns, name := metaName(d); yamlx.GetStr(d.YNode(), "kind") == "Service" && ui[[2]string{ns, name}] {
			continue
		}
		out = append(out, Finding{Object: d, Field: "metadata.name",
			Msg: objName(d) + " appears more than once in the input: applied, the later copy replaces the earlier; keep one"})
	}
	return out
}
