package scale

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Apply creates every item of the function's output ResourceList as rendered, `parallel` at a
// time, and returns the driver Pods as created (with their UIDs), by name.
func Apply(t testing.TB, c *testcluster.Cluster, out []byte, parallel int) map[string]*corev1.Pod {
	t.Helper()
	var rl struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(out, &rl); err != nil {
		t.Fatalf("the function's output: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var (
		mu   sync.Mutex
		pods = map[string]*corev1.Pod{}
		errs []string
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallel)
	)
	for _, item := range rl.Items {
		u := &unstructured.Unstructured{Object: item}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			created, err := create(ctx, c, u)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s %s: %v", u.GetKind(), u.GetName(), err))
				return
			}
			if created != nil {
				pods[created.Name] = created
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("creating the rendered objects: %d failed, e.g. %s", len(errs), strings.Join(errs[:min(5, len(errs))], "; "))
	}
	return pods
}

// create creates u; for a Pod it returns it as created.
func create(ctx context.Context, c *testcluster.Cluster, u *unstructured.Unstructured) (*corev1.Pod, error) {
	if u.GetKind() == "Pod" && u.GetAPIVersion() == "v1" {
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod); err != nil {
			return nil, err
		}
		// The scheduler's part: the EndpointSlice controller leaves out an endpoint whose
		// Pod names no existing Node (kubernetes pkg/controller/endpointslice reconciler:
		// "skipping Pod … Node … Not Found").
		pod.Spec.NodeName = NodeName
		return c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, &pod, metav1.CreateOptions{})
	}
	m, err := c.Mapping(u)
	if err != nil {
		return nil, err
	}
	_, err = c.Dynamic.Resource(m.Resource).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	return nil, err
}

// NodeName is the Node every Pod of a run is placed on.
const NodeName = "scale-node"

// EnsureNode creates the Node the Pods are placed on.
func EnsureNode(ctx context.Context, c *testcluster.Cluster) error {
	_, err := c.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// PodIP is the address application i's Pod is given: 10.128.0.0/10 has room for 4 million.
func PodIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 128+(i>>16), (i>>8)&0xff, i&0xff) }

// Ready does the kubelet's part for pod: it runs and is Ready with address ip, through the
// status subresource (as runtime/blackbox's podReady).
func Ready(ctx context.Context, c *testcluster.Cluster, pod *corev1.Pod, ip string) (*corev1.Pod, error) {
	now := metav1.Now()
	p := pod.DeepCopy()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "192.0.2.1",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}}
	return c.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

// properties is the application's spark.properties from its rendered ConfigMap.
func properties(out []byte, ns string) (map[string]string, error) {
	var rl struct {
		Items []struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
			Data     map[string]string `json:"data"`
		} `json:"items"`
	}
	if err := yaml.Unmarshal(out, &rl); err != nil {
		return nil, err
	}
	props := map[string]string{}
	for _, it := range rl.Items {
		if it.Kind == "ConfigMap" && it.Metadata.Namespace == ns {
			props[it.Metadata.Name] = it.Data["spark.properties"]
		}
	}
	return props, nil
}
