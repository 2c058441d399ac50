// Package operatortest holds what a Spark operator builds before Spark does, for the tests
// that run sparkui's runtime on a driver Pod as the operator would have it built (the
// runtime's black-box tests on a control plane, the node tests on a kubelet). It models
// operators' documented behaviour (docs/operators.md); it copies none of their code.
package operatortest

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// StackableContainer is the driver container of the Stackable operator's pod template
// (stackabletech/spark-k8s-operator rust/operator-binary/src/crd/roles.rs
// SparkContainer::Spark), also the podTemplateContainerName it passes to spark-submit
// (crd/mod.rs build_command).
const StackableContainer = "spark"

// StackableImage is the product image the operator resolves from spec.sparkImage for a
// productVersion alone: Stackable's repository, <version>-stackable<operator version> (a
// development build's 0.0.0-dev here).
func StackableImage(productVersion string) string {
	return "oci.stackable.tech/sdp/spark-k8s:" + productVersion + "-stackable0.0.0-dev"
}

// StackableDriverTemplate is the driver pod template the Stackable operator for Apache Spark
// (stackabletech/spark-k8s-operator, read at 405d5514) hands spark-submit for the
// spark.stackable.tech/v1alpha1 SparkApplication app: rust/operator-binary/src/
// spark_k8s_controller.rs pod_template builds one container "spark" with the product image,
// the application's ServiceAccount <name> (build_spark_role_serviceaccount), fsGroup 1000,
// the recommended labels and prometheus.io/scrape on the driver, then merges
// spec.driver.podOverrides over it last (pod_template.merge_from: MergeOverrides). The
// operator's config and log volumes and its init containers for job files, requirements and
// TLS are left out: they name ConfigMaps and secrets no test here has a use for. It returns
// the template and the image.
func StackableDriverTemplate(app *yaml.RNode) (*yaml.RNode, string, error) {
	name := app.GetName()
	v, err := app.Pipe(yaml.Lookup("spec", "sparkImage", "productVersion"))
	if err != nil || v == nil {
		return nil, "", fmt.Errorf("SparkApplication %s: no spec.sparkImage.productVersion (%v)", name, err)
	}
	image := StackableImage(yaml.GetValue(v))
	tmpl, err := yaml.Parse(`metadata:
  labels:
    app.kubernetes.io/name: spark-k8s
    app.kubernetes.io/instance: ` + name + `
    app.kubernetes.io/component: spark
    app.kubernetes.io/managed-by: spark.stackable.tech_sparkapplication
    prometheus.io/scrape: "true"
spec:
  serviceAccountName: ` + name + `
  securityContext: {fsGroup: 1000}
  containers:
  - name: ` + StackableContainer + `
    image: ` + image + `
`)
	if err != nil {
		return nil, "", err
	}
	o, err := app.Pipe(yaml.Lookup("spec", "driver", "podOverrides"))
	if err != nil {
		return nil, "", err
	}
	if o != nil {
		MergeOverrides(tmpl.YNode(), o.YNode(), "")
	}
	return tmpl, image, nil
}

// MergeOverrides merges a podOverrides mapping src into the pod template dst as the
// Stackable operator does: k8s-openapi's generated DeepMerge (Arnavion/k8s-openapi
// src/v1_33/api/core/v1/container.rs and pod_spec.rs, impl DeepMerge), after the API's
// list-map keys — containers, initContainers, volumes and env by name, volumeMounts by
// mountPath, ports by containerPort; a mapping merged key by key; anything else replaced.
// key is the field dst is the value of ("" at the top).
func MergeOverrides(dst, src *yaml.Node, key string) {
	listKey := map[string]string{"containers": "name", "initContainers": "name", "volumes": "name", "env": "name",
		"volumeMounts": "mountPath", "ports": "containerPort"}[key]
	switch {
	case dst.Kind == yaml.MappingNode && src.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(src.Content); i += 2 {
			k, v := src.Content[i].Value, src.Content[i+1]
			found := false
			for j := 0; j+1 < len(dst.Content); j += 2 {
				if dst.Content[j].Value != k {
					continue
				}
				found = true
				if d := dst.Content[j+1]; d.Kind == v.Kind && (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode) {
					MergeOverrides(d, v, k)
				} else {
					dst.Content[j+1] = v
				}
			}
			if !found {
				dst.Content = append(dst.Content, src.Content[i], v)
			}
		}
	case dst.Kind == yaml.SequenceNode && src.Kind == yaml.SequenceNode && listKey != "":
		for _, e := range src.Content {
			id := yaml.NewRNode(e).Field(listKey)
			merged := false
			for _, d := range dst.Content {
				if f := yaml.NewRNode(d).Field(listKey); id != nil && f != nil && f.Value.YNode().Value == id.Value.YNode().Value {
					MergeOverrides(d, e, "")
					merged = true
				}
			}
			if !merged {
				dst.Content = append(dst.Content, e)
			}
		}
	default:
		*dst = *src
	}
}
