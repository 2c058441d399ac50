package validate

// checkSUI016: without a serviceAccountName the driver runs as "default", and the grant
// sparkui creates goes to every Pod in the namespace that does the same.
func checkSUI016(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.ServiceAccount == "" {
			out = append(out, Finding{Object: a.Pod, Field: "spec.serviceAccountName",
				Msg: "the driver Pod names no ServiceAccount: it runs as \"default\", which then gets the runtime's grant; set spark.kubernetes.authenticate.driver.serviceAccountName"})
		}
	}
	return out
}
