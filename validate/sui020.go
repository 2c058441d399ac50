package validate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
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
// to delete.
func checkSUI020(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil {
			continue
		}
		svc := a.UIService.YNode()
		report := func(field, what string) {
			out = append(out, Finding{Object: a.UIService, Field: field,
				Msg: "the UI Service declares " + what + ", which the runtime writes (an older sparkui output or a hand edit): every re-apply of the manifests would reset the runtime's bind; remove it"})
		}
		for i, p := range yamlx.Items(yamlx.Get(svc, "spec", "ports")) {
			if t := yamlx.Get(p, "targetPort"); t != nil {
				report(fmt.Sprintf("spec.ports[%d].targetPort", i), "targetPort "+yamlx.Str(t)+" (a port the runtime never verified)")
			}
		}
		if yamlx.Get(svc, "metadata", "ownerReferences") != nil {
			report("metadata.ownerReferences", "ownerReferences")
		}
		if yamlx.Get(svc, "metadata", "annotations", names.AnnotationResolvedExternalURI) != nil {
			report(`metadata.annotations["`+names.AnnotationResolvedExternalURI+`"]`, "the "+names.AnnotationResolvedExternalURI+" annotation")
		}
	}
	return out
}
