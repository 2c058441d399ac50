package validate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI042: the kubeflow CRD in the input prunes the field the chosen injection writes the runtime into.
var SUI042 = Rule{
	ID:       "SUI042",
	Severity: framework.Error,
	Title:    "the kubeflow CRD in the input drops the field the injection needs",
	Name:     "KubeflowCRDTooOld",
	Catches: "A kubeflow SparkApplication or ScheduledSparkApplication carrying sparkui's runtime next to the operator's CustomResourceDefinition (sparkoperator.k8s.io) " +
		"whose v1beta2 schema lacks the field the chosen injection needs: restartPolicy under driver.initContainers (webhook injection; CRDs of charts before 1.3.2) " +
		"or driver.template (template injection; CRDs before chart 2.1.0).",
	Why: "The API server prunes fields its CRD schema does not know. Webhook injection: the runtime reaches the driver Pod without restartPolicy: Always, " +
		"an ordinary init container that never exits (the API server refuses that Pod because of the runtime's startupProbe, so the application fails at submission). " +
		"Template injection: driver.template is dropped whole, the runtime never reaches the driver Pod and the UI Service is never bound, without any error.",
	Fix: "Upgrade the CRDs (and the operator) to the minimum of the injection: webhook injection, chart 1.3.2 (operator v1beta2-1.5.0-3.5.0) or later; " +
		"template injection, chart and operator 2.1.0 or later. Or choose the injection the installed version supports (docs/operators.md, \"Minimum kubeflow versions\").",
	Failing: `kind: CustomResourceDefinition   # chart 1.3.1's: driver.initContainers items have no restartPolicy
metadata: {name: sparkapplications.sparkoperator.k8s.io}
---
kind: SparkApplication             # injection: webhook
spec:
  driver:
    initContainers:
    - name: sparkui-runtime
      restartPolicy: Always        # SUI042 spec.driver.initContainers[0].restartPolicy: pruned on create
`,
	Passing: `kind: CustomResourceDefinition   # chart 1.3.2 or later: restartPolicy is in the schema
`,
	Check: checkSUI042,
}

// checkSUI042: a CRD that prunes the injection's field silently takes the runtime's setup apart
// on the API server, before any operator sees it. What the field is, and which version keeps
// it, the carrier's adapter says (app.Carrier.SchemaNeed).
func checkSUI042(ctx *Context) []Finding {
	crds := map[[2]string]*yaml.RNode{} // group, kind → CRD
	for _, it := range ctx.Model.Items {
		if it == nil || it.YNode() == nil || it.YNode().Kind != yaml.MappingNode {
			continue
		}
		n := it.YNode()
		if yamlx.GetStr(n, "apiVersion") != "apiextensions.k8s.io/v1" || yamlx.GetStr(n, "kind") != "CustomResourceDefinition" {
			continue
		}
		crds[[2]string{yamlx.GetStr(n, "spec", "group"), yamlx.GetStr(n, "spec", "names", "kind")}] = it
	}
	if len(crds) == 0 {
		return nil
	}
	var out []Finding
	for _, a := range ctx.Model.Apps {
		c := a.Carrier
		crd := crds[[2]string{c.Group(), c.ObjectKind}]
		i, rt, _ := runtimeContainerAt(a)
		if crd == nil || rt == nil {
			continue
		}
		need := c.SchemaNeed(i)
		if need == nil {
			continue
		}
		schema := crdSchema(crd.YNode(), c.Version())
		if schema == nil {
			continue // no schema at the version: the API server would refuse the resource itself
		}
		if schemaHas(schema, need.Path) {
			continue
		}
		_, crdName := metaName(crd)
		out = append(out, Finding{Object: c.Object, Field: need.Field,
			Msg: fmt.Sprintf("CustomResourceDefinition %s in the input has no %s in its %s schema: %s; the %s injection needs %s (or set kubeflow.injection to the one the installed operator supports, docs/operators.md)",
				crdName, need.Field, c.Version(), need.Effect, c.Injection, need.Min)})
	}
	return out
}

// crdSchema is the openAPIV3Schema of version v of an apiextensions.k8s.io/v1 CRD.
func crdSchema(crd *yaml.Node, v string) *yaml.Node {
	for _, ver := range yamlx.Items(yamlx.Get(crd, "spec", "versions")) {
		if yamlx.GetStr(ver, "name") == v {
			return yamlx.Get(ver, "schema", "openAPIV3Schema")
		}
	}
	return nil
}

// schemaHas reports whether a structural schema keeps the field at path ("[]" steps into an
// array's items): it is declared, or an object on the way preserves unknown fields.
func schemaHas(s *yaml.Node, path []string) bool {
	for _, p := range path {
		if s == nil {
			return false
		}
		if yamlx.GetStr(s, "x-kubernetes-preserve-unknown-fields") == "true" {
			return true
		}
		if p == "[]" {
			s = yamlx.Get(s, "items")
		} else {
			s = yamlx.Get(s, "properties", p)
		}
	}
	return s != nil
}
