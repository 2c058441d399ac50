package blackbox

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

type svcState struct {
	selector   map[string]string
	targetPort string
}

func (s svcState) String() string {
	return fmt.Sprintf("selector %v, targetPort %s", s.selector, s.targetPort)
}

func service(t *testing.T, c *testcluster.Cluster, ns, name string) svcState {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Ports) != 1 {
		t.Fatalf("Service ports %+v, want one", s.Spec.Ports)
	}
	return svcState{selector: s.Spec.Selector, targetPort: s.Spec.Ports[0].TargetPort.String()}
}

// endpoints lists "ip:port ready=…" of every endpoint in the Service's EndpointSlices, sorted.
func endpoints(ctx context.Context, c *testcluster.Cluster, ns, svc string) ([]string, error) {
	list, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			for _, addr := range ep.Addresses {
				for _, p := range s.Ports {
					port := int32(0)
					if p.Port != nil {
						port = *p.Port
					}
					out = append(out, fmt.Sprintf("%s:%d ready=%t", addr, port, ep.Conditions.Ready != nil && *ep.Conditions.Ready))
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func waitEndpoints(t *testing.T, c *testcluster.Cluster, ns, svc string, want []string) {
	t.Helper()
	testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("EndpointSlices of %s = %v", svc, want), func() (bool, string) {
		got, err := endpoints(testcluster.Context(t, 10*time.Second), c, ns, svc)
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
}

// holdEndpoints checks the slices keep want for d: after a re-apply that reset the Service
// the EndpointSlice controller rewrites them within milliseconds.
func holdEndpoints(t *testing.T, c *testcluster.Cluster, ns, svc string, want []string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		got, err := endpoints(testcluster.Context(t, 10*time.Second), c, ns, svc)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("EndpointSlices of %s became %v, want %v", svc, got, want)
		}
	}
}
