package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI040: the UI Service lacks Flux's create-only apply policy.
var SUI040 = Rule{
	ID:       "SUI040",
	Severity: framework.Error,
	Title:    "the UI Service lacks Flux's create-only apply policy",
	Name:     "UIServiceFluxIfNotPresent",
	Catches:  "A sparkui UI Service without the annotation " + names.AnnotationFluxSSA + ": " + names.FluxSSAIfNotPresent + " (missing, or another policy): an older sparkui output, or a hand edit.",
	Why:      "Flux's kustomize-controller normalizes every object through its typed form before applying it: the targetPort the manifests leave out is sent as 0, the API server defaults it to the port, and Flux applies it with forced ownership. Every reconcile then resets the targetPort the runtime bound, and Flux reports the bound port as drift, while the selector keeps routing: the Service points at a port the runtime never verified until the next bind. With " + names.FluxSSAIfNotPresent + " Flux creates the Service and never applies it again while it exists. Other appliers ignore the annotation.",
	Fix:      "Run sparkui-fn in transform mode on the manifests (it adds the annotation), or add it by hand. Flux then no longer updates the live UI Service: roll a change to it as docs/gitops.md says.",
	Failing: `kind: Service
metadata:
  name: wordcount-…-ui-svc
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-7e0d…}
  annotations: {kustomize.toolkit.fluxcd.io/ssa: Override}   # SUI040 (or no annotation at all)
spec:
  ports: [{name: spark-ui, protocol: TCP, port: 4050}]
`,
	Passing: `metadata:
  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}
`,
	Check: checkSUI040,
	// On CREATE only: the runtime's bind and an older live Service are updates.
	Admission: []AdmissionPolicy{
		{Name: "ui-service", Group: "", Versions: []string{"v1"}, Resources: []string{"services"}, Operations: opCreate,
			ObjectLabels: map[string]string{names.LabelManagedBy: names.ManagedByValue},
			Conditions:   []AdmissionCondition{{"ui-service", celIsOurUIService}},
			Validations: []string{`has(object.metadata.annotations) && '` + names.AnnotationFluxSSA + `' in object.metadata.annotations && ` +
				`object.metadata.annotations['` + names.AnnotationFluxSSA + `'].lowerAscii() == '` + strings.ToLower(names.FluxSSAIfNotPresent) + `'`}},
	},
}

// checkSUI040 points at the annotation when one is declared with another value, else at the
// annotations map the function would write it into.
func checkSUI040(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || app.FluxCreatesOnly(a.UIService.YNode()) {
			continue
		}
		field := `metadata.annotations["` + names.AnnotationFluxSSA + `"]`
		msg := "the UI Service lacks the annotation " + names.AnnotationFluxSSA + ": " + names.FluxSSAIfNotPresent +
			": Flux would reset the runtime's bound targetPort at every reconcile (it applies targetPort 0, defaulted to the port) and report the bind as drift; add it"
		if v := yamlx.Get(a.UIService.YNode(), "metadata", "annotations", names.AnnotationFluxSSA); v != nil {
			msg = "the UI Service's annotation " + names.AnnotationFluxSSA + " is " + yamlx.Str(v) + ", not " + names.FluxSSAIfNotPresent +
				": Flux would apply the Service again at every reconcile and reset the runtime's bound targetPort (or, with Ignore, never create it); set it to " + names.FluxSSAIfNotPresent
		}
		out = append(out, Finding{Object: a.UIService, Field: field, Msg: msg})
	}
	return out
}
