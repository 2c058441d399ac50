package blackbox

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// rollServiceChange is the trade-off of an applier that only creates the UI Service (Flux
// with kustomize.toolkit.fluxcd.io/ssa: IfNotPresent): the user changes the Service in Git
// (functionConfig service.type NodePort), the applier leaves the live one as it is, and the
// way docs/gitops.md gives to roll it, a forced server-side apply of the re-rendered UI
// Service, changes it and keeps the bind. It returns the changed output, what the pipeline
// applies from then on.
func rollServiceChange(t *testing.T, c *testcluster.Cluster, a applier, ns, appID, svc string, bound svcState, boundSlice []string) []byte {
	t.Helper()
	changed := strings.Replace(input, "  spec:\n    sparkConf:", "  spec:\n    service:\n      type: NodePort\n    sparkConf:", 1)
	r := renderList(t, strings.NewReplacer("NS", ns, "APPID", appID).Replace(changed))
	typ := func() corev1.ServiceType {
		s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Spec.Type
	}
	out := a.apply(t, c, r.stream)
	if got, ty := service(t, c, ns, svc), typ(); got.String() != bound.String() || ty != corev1.ServiceTypeClusterIP {
		t.Fatalf("%s applied the changed UI Service (type %s, %s), want it left as created (ClusterIP, %s)\n%s", a.name, ty, got, bound, out)
	}
	noDrift(t, c, a, r.stream, ns, svc, "with the changed UI Service in Git")
	out = kubectl(t, c.KubeconfigFile(t, c.Config), uiServiceDoc(t, r.stream), "apply", "--server-side", "--force-conflicts", "-f", "-")
	if got, ty := service(t, c, ns, svc), typ(); got.String() != bound.String() || ty != corev1.ServiceTypeNodePort {
		t.Fatalf("rolled by hand: type %s, %s, want NodePort, %s\n%s", ty, got, bound, out)
	}
	holdEndpoints(t, c, ns, svc, boundSlice, 2*time.Second)
	return r.stream
}
