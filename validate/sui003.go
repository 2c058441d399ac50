package validate

// checkSUI003: a UI Service for an application without a UI would never be bound, and its
// name would mislead anyone looking for the UI.
func checkSUI003(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Settings.UIEnabled && a.UIService != nil {
			out = append(out, Finding{Object: a.UIService,
				Msg: "UI Service for Pod " + a.PodName + " exists but spark.ui.enabled=false: remove it"})
		}
	}
	return out
}
