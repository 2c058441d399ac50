package blackbox

// stackable_test.go: the runtime end to end on the driver Pod Stackable's operator for Apache
// Spark has Spark build from a rewritten spec.driver.podOverrides (runCarrier, carriers_test.go:
// bind, EndpointSlice, withdrawal by the preStop hook).

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/operatortest"
)

func TestCarrierStackable(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-stackable", runLabel: names.LabelAppSelector, runs: 1, build: stackableDriver})
}

// TestCarrierStackableOverrides: podOverrides of the user's own (a ServiceAccount, a label, an
// env var on the spark container) merged with sparkui's additions.
func TestCarrierStackableOverrides(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-stackable-overrides", runLabel: names.LabelAppSelector, runs: 1, build: stackableDriver})
}

// stackableDriver builds the driver Pod of a Stackable SparkApplication: the operator's driver
// pod template with spec.driver.podOverrides merged over it (testkit/operatortest
// StackableDriverTemplate, which cites stackabletech/spark-k8s-operator), handed to
// spark-submit with podTemplateContainerName=spark (crd/mod.rs build_command). Spark then
// fills in the container and labels the Pod spark-app-selector=spark-<32 hex>, new every
// submission, and names it <name>-<16 hex>-driver.
func stackableDriver(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions) {
	name := carrier.GetName()
	tmpl, image, err := operatortest.StackableDriverTemplate(carrier)
	if err != nil {
		t.Fatal(err)
	}
	var pt corev1.PodTemplateSpec
	decode(t, tmpl, &pt)
	pod := &corev1.Pod{ObjectMeta: pt.ObjectMeta, Spec: pt.Spec}
	appID := "spark-" + randomHex(t, 16)
	pod.Name = name + "-" + randomHex(t, 8) + "-driver"
	idx := sparkContainer(&pod.Spec, operatortest.StackableContainer)
	if pod.Spec.Containers[idx].Image == "" {
		pod.Spec.Containers[idx].Image = image
	}
	sparkDriver(pod, idx, image, "", confPort(t, lookup(t, carrier, "spec", "sparkConf")), appID, nil)
	return pod, uiOptions{AppID: appID, PodName: pod.Name}
}
