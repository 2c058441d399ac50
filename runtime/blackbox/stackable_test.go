package blackbox

// stackable_test.go: the runtime end to end on the driver Pod Stackable's operator for Apache
// Spark has Spark build from a rewritten spec.driver.podOverrides (runCarrier, carriers_test.go:
// bind, EndpointSlice, withdrawal by the preStop hook).

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
)

func TestCarrierStackable(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-stackable", runLabel: names.LabelAppSelector, runs: 1, build: stackableDriver})
}

// TestCarrierStackableOverrides: podOverrides of the user's own (a ServiceAccount, a label, an
// env var on the spark container) merged with sparkui's additions.
func TestCarrierStackableOverrides(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-stackable-overrides", runLabel: names.LabelAppSelector, runs: 1, build: stackableDriver})
}

// stackableDriver builds the driver Pod of a Stackable SparkApplication
// (stackabletech/spark-k8s-operator, read at 405d5514): the operator's driver pod template
// (rust/operator-binary/src/spark_k8s_controller.rs pod_template: one container "spark" with
// the product image, the application's ServiceAccount <name>, fsGroup 1000, the recommended
// labels, prometheus.io/scrape on the driver) with spec.driver.podOverrides merged over it
// (pod_template.merge_from, k8s-openapi's DeepMerge: mergeOverrides), handed to spark-submit
// with podTemplateContainerName=spark (crd/mod.rs build_command). Spark then fills in the
// container and labels the Pod spark-app-selector=spark-<32 hex>, new every submission, and
// names it <name>-<16 hex>-driver. The operator's config and log volumes are left out: they
// name ConfigMaps this test has no use for.
func stackableDriver(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	name := carrier.GetName()
	spec := lookup(t, carrier, "spec")
	image := "oci.stackable.tech/sdp/spark-k8s:" + str(t, spec, "sparkImage", "productVersion") + "-stackable0.0.0-dev"
	tmpl := yaml.MustParse(`metadata:
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
  - name: spark
    image: ` + image + `
`)
	if o := lookup(t, spec, "driver", "podOverrides"); o != nil {
		mergeOverrides(tmpl.YNode(), o.YNode(), "")
	}
	var pt corev1.PodTemplateSpec
	decode(t, tmpl, &pt)
	pod := &corev1.Pod{ObjectMeta: pt.ObjectMeta, Spec: pt.Spec}
	appID := "spark-" + randomHex(t, 16)
	pod.Name = name + "-" + randomHex(t, 8) + "-driver"
	idx := sparkContainer(&pod.Spec, "spark")
	if pod.Spec.Containers[idx].Image == "" {
		pod.Spec.Containers[idx].Image = image
	}
	sparkDriver(pod, idx, image, "", confPort(t, lookup(t, spec, "sparkConf")), appID, nil)
	return pod, uiOptions{AppID: appID, PodName: pod.Name}
}

// mergeOverrides merges a podOverrides mapping into a pod template as the Stackable operator
// does (k8s-openapi's generated DeepMerge, after the API's list-map keys: containers,
// initContainers, volumes and env by name, volumeMounts by mountPath, ports by containerPort;
// a mapping merged key by key; anything else replaced).
func mergeOverrides(dst, src *yaml.Node, key string) {
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
					mergeOverrides(d, v, k)
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
					mergeOverrides(d, e, "")
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
