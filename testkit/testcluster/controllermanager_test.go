package testcluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// sliceState summarises a Service's EndpointSlices: "ip:port" for every ready
// endpoint, the number of endpoints (ready or not), and the slices managed by
// the EndpointSlice controller (as opposed to mirrored ones).
type sliceState struct {
	ready     []string
	total     int
	managed   int
	mirrored  int
	summaries []string
}

func (s sliceState) String() string { return strings.Join(s.summaries, "; ") }

func slices(ctx context.Context, c *Cluster, ns, svc string) (sliceState, error) {
	var st sliceState
	list, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + svc,
	})
	if err != nil {
		return st, err
	}
	for _, s := range list.Items {
		switch s.Labels[discoveryv1.LabelManagedBy] {
		case "endpointslice-controller.k8s.io":
			st.managed++
		case "endpointslicemirroring-controller.k8s.io":
			st.mirrored++
		}
		var eps []string
		st.total += len(s.Endpoints)
		for _, ep := range s.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			for _, addr := range ep.Addresses {
				for _, p := range s.Ports {
					if p.Port == nil {
						continue
					}
					e := fmt.Sprintf("%s:%d", addr, *p.Port)
					if ready {
						st.ready = append(st.ready, e)
					}
					eps = append(eps, fmt.Sprintf("%s(ready=%t)", e, ready))
				}
			}
		}
		st.summaries = append(st.summaries, fmt.Sprintf("%s[%s]{%s}", s.Name, s.Labels[discoveryv1.LabelManagedBy], strings.Join(eps, ",")))
	}
	return st, nil
}

// readyDriver creates a Node and a Pod on it whose status (set through the
// status subresource, there is no kubelet) is Running and Ready with podIP.
func readyDriver(ctx context.Context, t *testing.T, c *Cluster, ns, podIP string) *corev1.Pod {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "driver", Namespace: ns, Labels: map[string]string{"spark-role": "driver"}},
		Spec: corev1.PodSpec{
			// The EndpointSlice controller skips a Pod whose Node it cannot find.
			NodeName: node.Name,
			Containers: []corev1.Container{{
				Name:  "spark-kubernetes-driver",
				Image: "spark:4.0.0",
				Ports: []corev1.ContainerPort{{Name: "spark-ui", ContainerPort: 4041}},
			}},
		},
	}
	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase:  corev1.PodRunning,
		PodIP:  podIP,
		PodIPs: []corev1.PodIP{{IP: podIP}},
		HostIP: "192.0.2.10",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	pod, err = c.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("pod status: %v", err)
	}
	return pod
}

func uiService(ns string, owner *corev1.Pod) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ui", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"spark-role": "driver"},
			Ports:    []corev1.ServicePort{{Name: "spark-ui", Port: 4040, TargetPort: intstr.FromInt32(4041)}},
		},
	}
	if owner != nil {
		// Collected with the Pod, as the runtime's bind arranges.
		svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: owner.UID}}
	}
	return svc
}

func TestControllerManagerEndpointSlicesAndGC(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 120*time.Second)
	ns := c.UniqueNamespace(t)
	const podIP = "10.244.1.7"
	pod := readyDriver(ctx, t, c, ns, podIP)
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, uiService(ns, pod), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	want := podIP + ":4041"
	WaitFor(t, 30*time.Second, "an EndpointSlice with "+want, func() (bool, string) {
		st, err := slices(ctx, c, ns, "ui")
		if err != nil {
			return false, err.Error()
		}
		return len(st.ready) == 1 && st.ready[0] == want && st.managed == 1, st.String()
	})

	// Withdraw: a selector that matches nothing empties the slice.
	patch := []byte(`{"spec":{"selector":{"spark-role":null,"sparkui.dev/withdrawn":"` + string(pod.UID) + `"}}}`)
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, "ui", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, "the EndpointSlice to be emptied", func() (bool, string) {
		st, err := slices(ctx, c, ns, "ui")
		if err != nil {
			return false, err.Error()
		}
		return st.total == 0 && st.managed >= 1, st.String()
	})

	// Garbage collection: deleting the Pod (no kubelet here: grace period 0)
	// deletes the Service it owns.
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 60*time.Second, "the garbage collector to delete the Service", func() (bool, string) {
		_, err := c.Client.CoreV1().Services(ns).Get(ctx, "ui", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// TestControllerManagerRemovedSelectorKeepsEndpoint pins the fact the design
// rests on: removing a Service's selector does not withdraw the endpoint.
func TestControllerManagerRemovedSelectorKeepsEndpoint(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 120*time.Second)
	ns := c.UniqueNamespace(t)
	const podIP = "10.244.1.8"
	readyDriver(ctx, t, c, ns, podIP)
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, uiService(ns, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := podIP + ":4041"
	WaitFor(t, 30*time.Second, "an EndpointSlice with "+want, func() (bool, string) {
		st, err := slices(ctx, c, ns, "ui")
		if err != nil {
			return false, err.Error()
		}
		return len(st.ready) == 1 && st.ready[0] == want, st.String()
	})

	patch := []byte(`[{"op":"remove","path":"/spec/selector"}]`)
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, "ui", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Give the controllers time to act, then check the endpoint is still served.
	time.Sleep(3 * time.Second)
	st, err := slices(ctx, c, ns, "ui")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after removing the selector: %s", st)
	found := false
	for _, e := range st.ready {
		found = found || e == want
	}
	if !found {
		t.Fatalf("the endpoint %s was withdrawn by removing the selector (slices: %s); the design's premise changed", want, st)
	}
}
