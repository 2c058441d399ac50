package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI020: the UI Service declares a field the runtime writes.
var SUI020 = Rule{
	ID:       "SUI020",
	Severity: framework.Error,
	Title:    "the UI Service declares a field the runtime writes",
	Name:     "UIServiceRuntimeOwnedField",
	Catches:  "A sparkui UI Service that declares a targetPort on a port, metadata.ownerReferences, or the sparkui.dev/resolved-external-uri annotation in the manifests: an older sparkui output, or a hand edit. A selector is SUI004's.",
	Why:      "The runtime sets these on the live Service once it has found the UI. A field the manifests declare is reset by every re-apply (kubectl apply, forced server-side apply, Argo CD and Flux syncs): the Service then routes to the declared port while the selector keeps selecting the driver, a port the runtime never verified (under hostNetwork possibly another application's UI).",
	Fix:      "Remove the field: run sparkui-fn in transform mode on the manifests (it removes them), or delete it by hand. Without a targetPort the API server defaults it to the port until the runtime binds.",
	Failing: `kind: Service
metadata:
  name: wordcount-…-ui-svc
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-7e0d…}
  annotations: {sparkui.dev/resolved-external-uri: "http://10.0.0.7:31040"}   # SUI020
  ownerReferences: [{apiVersion: v1, kind: Pod, name: wordcount-…-driver, uid: 0b7c…}]   # SUI020
spec:
  ports: [{name: spark-ui, protocol: TCP, port: 4050, targetPort: 4050}]   # SUI020 spec.ports[0].targetPort
`,
	Passing: `spec:
  ports: [{name: spark-ui, protocol: TCP, port: 4050}]   # no targetPort, no selector
`,
	Check: checkSUI020,
}

// checkSUI020 reports each declared runtime-owned field apart, so each one's path says what
// to delete; transform removes the very same list.
func checkSUI020(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		for _, f := range app.RuntimeOwnedFields(a.UIService.YNode()) {
			what := f.What
			if f.What == "targetPort" {
				what = "targetPort " + f.Value + " (a port the runtime never verified)"
			}
			out = append(out, Finding{Object: a.UIService, Field: f.Path,
				Msg: "the UI Service declares " + what + ", which the runtime writes (an older sparkui output or a hand edit): every re-apply of the manifests would reset the runtime's bind; remove it"})
		}
	}
	return out
}
