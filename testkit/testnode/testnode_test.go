package testnode

import (
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestNodeRunsPodAndLeavesNothing: a node on its own subnet registers and gets Ready, the
// scheduler binds a Pod to it, the kubelet runs it through containerd and CNI (Running, an IP
// of the node's subnet, the service-account token projected), the API server reaches the
// kubelet (pods/log), and Stop leaves no process,
// namespace, cgroup or file behind.
func TestNodeRunsPodAndLeavesNothing(t *testing.T) {
	n := Start(t, Options{Subnet: "10.251.7.0/24"})
	if n.Gateway.String() != "10.251.7.1" {
		t.Errorf("gateway %s, want 10.251.7.1", n.Gateway)
	}
	c := n.Cluster
	ns := "node-smoke"
	n.PrepareNamespace(t, ns)
	ctx := testcluster.Context(t, 3*time.Minute)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "idle", Namespace: ns},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers: []corev1.Container{{
				Name: "idle", Image: PauseImage, ImagePullPolicy: corev1.PullNever,
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}},
		},
	}
	created := time.Now()
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	testcluster.WaitFor(t, 2*time.Minute, "the Pod Running", func() (bool, string) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "idle", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got = p
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase) + " " + podWhy(p)
	})
	t.Logf("create → Running in %s", time.Since(created).Round(time.Millisecond))
	if got.Spec.NodeName != n.Name {
		t.Errorf("Pod on node %q, want %q", got.Spec.NodeName, n.Name)
	}
	ip, err := netip.ParseAddr(got.Status.PodIP)
	if err != nil || !n.Subnet.Contains(ip) || ip == n.Gateway {
		t.Errorf("Pod IP %q, want an address of %s other than the gateway", got.Status.PodIP, n.Subnet)
	}
	var token bool
	for _, v := range got.Spec.Volumes {
		token = token || (v.Projected != nil && strings.HasPrefix(v.Name, "kube-api-access-"))
	}
	if !token {
		t.Errorf("no service-account token volume: the ServiceAccount admission plugin is off? volumes %v", got.Spec.Volumes)
	}

	// The `kubernetes` Service's ClusterIP, as a Pod's in-cluster client reaches it: through
	// kube-proxy's rules to the forwarder, with a certificate valid for that address.
	cfg := rest.CopyConfig(c.Config)
	cfg.Host = "https://" + KubernetesServiceIP + ":443"
	cfg.Dial = n.DialContext
	inCluster, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, time.Minute, "the API server through the kubernetes Service's ClusterIP", func() (bool, string) {
		v, err := inCluster.Discovery().ServerVersion()
		if err != nil {
			return false, err.Error()
		}
		return v.GitVersion == testcluster.Version, v.GitVersion
	})

	// The API server reaches the kubelet (egress.go): pods/log is served by the kubelet,
	// through the CONNECT proxy, with the API server's client certificate.
	if _, err := c.Client.CoreV1().Pods(ns).GetLogs("idle", &corev1.PodLogOptions{}).DoRaw(ctx); err != nil {
		t.Errorf("pods/log through the API server: %v", err)
	}

	holder := n.holder.cmd.Process.Pid
	netns, _ := os.Readlink(n.netns)
	dir, cg := n.Dir, n.CgroupRoot
	if err := n.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still exists after Stop (%v)", dir, err)
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(holder))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the namespace holder %d still runs", holder)
	}
	hs, _ := hierarchies()
	for _, h := range hs {
		if _, err := os.Stat(filepath.Join(h, cg)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cgroup %s%s still exists", h, cg)
		}
	}
	// No process is left in the node's network namespace.
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, p := range procs {
		if ns, err := os.Readlink(p); err == nil && ns == netns {
			t.Errorf("%s is still in the node's network namespace %s", p, netns)
		}
	}
}

// podWhy summarises why a Pod is not running yet.
func podWhy(p *corev1.Pod) string {
	var b strings.Builder
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			b.WriteString(string(c.Type) + ": " + c.Message + "; ")
		}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil {
			b.WriteString(cs.Name + " waiting: " + w.Reason + " " + w.Message + "; ")
		}
		if x := cs.State.Terminated; x != nil {
			b.WriteString(cs.Name + " terminated: " + x.Reason + " " + x.Message + "; ")
		}
	}
	return b.String()
}
