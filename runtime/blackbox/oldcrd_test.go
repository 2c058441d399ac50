package blackbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// oldCRDs are the CRDs of kubeflow chart 1.3.1, the last without restartPolicy under
// driver.initContainers (testdata/assets/crds-kubeflow-chart-1.3.1/SOURCE).
var oldCRDs = testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds-kubeflow-chart-1.3.1"}}

// TestKubeflowWebhookOldCRDRefused: on a kubeflow install whose CRD predates
// restartPolicy under driver.initContainers (charts up to 1.3.1), the function's webhook-route
// SparkApplication is stored without the runtime's restartPolicy (the API server prunes what
// the schema does not know) and the operator's webhook adds the runtime to the driver Pod as
// an ordinary init container, which never exits: the driver would never start and the
// application stay Submitted. The runtime's startupProbe makes the API server refuse that Pod
// at creation instead, with a message naming the field; spark-submit fails with it and the
// operator marks the application failed. Without the probe (sparkui's output before it had
// one) the same Pod is accepted, and hangs.
func TestKubeflowWebhookOldCRDRefused(t *testing.T) {
	c := testcluster.Shared(t, oldCRDs)
	ns := c.UniqueNamespace(t)
	ctx := testcluster.Context(t, time.Minute)
	_, carrier := renderCarrier(t, "carrier-kubeflow-webhook", ns, nil, false)

	// The pipeline applies the SparkApplication; the API server stores it by the old schema.
	obj, err := testcluster.DecodeYAML([]byte(carrier.MustString()))
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "sparkoperator.k8s.io", Version: "v1beta2", Resource: "sparkapplications"}
	if _, err := c.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the SparkApplication: %v", err)
	}
	stored, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(stored.Object)
	if err != nil {
		t.Fatal(err)
	}
	storedApp, err := yaml.Parse(string(js))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := storedApp.Pipe(yaml.Lookup("spec", "driver", "initContainers", "[name="+sidecar.ContainerName+"]"))
	if err != nil || rt == nil {
		t.Fatalf("the stored SparkApplication has no runtime: %v\n%s", err, storedApp.MustString())
	}
	if rp := rt.Field("restartPolicy"); rp != nil {
		t.Fatalf("chart 1.3.1's CRD kept restartPolicy (%s): this test no longer shows the old install", rp.Value.MustString())
	}
	if rt.Field("startupProbe") == nil {
		t.Fatalf("chart 1.3.1's CRD dropped the startupProbe too:\n%s", rt.MustString())
	}

	// The operator's webhook builds the driver Pod from the stored resource.
	pod, _ := kubeflowDriver(true, false)(t, storedApp, 1)
	pod.Namespace, pod.Spec.ServiceAccountName = ns, "default"
	_, err = c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	want := "spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("the driver Pod from an old CRD: %v, want it refused with %q", err, want)
	}
	t.Logf("refused as wanted: %v", err)

	// Without the startupProbe the API server accepts it: an init container that never exits.
	old := pod.DeepCopy()
	old.Name += "-no-probe"
	for i := range old.Spec.InitContainers {
		if old.Spec.InitContainers[i].Name == sidecar.ContainerName {
			old.Spec.InitContainers[i].StartupProbe = nil
		}
	}
	created, err := c.Client.CoreV1().Pods(ns).Create(ctx, old, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the same Pod without the startupProbe: %v", err)
	}
	for _, ic := range created.Spec.InitContainers {
		if ic.Name == sidecar.ContainerName && ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			t.Errorf("the runtime is a native sidecar after all")
		}
	}
}
