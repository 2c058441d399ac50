// Package testnode runs a real Kubernetes node for tests: a kubelet and kube-scheduler
// (built from the same k8s.io/kubernetes module as the control plane, by
// `testkit/testcluster/build.sh node`), Debian's containerd, runc and CNI plugins, against
// a control plane of testkit/testcluster. Pods really run: images made by the project's own
// engine-free builder (internal/ociimage) are imported into the node's containerd, the pause
// image included.
//
// Everything the node changes lives in namespaces and directories of its own, so two runs
// never meet and nothing is left behind:
//
//   - a network namespace (made by unshare, held by a process of the harness) holds the
//     node's bridge, its Pods' network, the kubelet's and containerd's ports and every
//     iptables rule; it vanishes with its last process. The host's network is not touched
//     (no interface, route, rule or sysctl), and Pods have routes only to the bridge subnet
//     and the Service range: no default route, no masquerade, nothing leaves the machine;
//   - a mount namespace of its own (private propagation) holds containerd's and the kubelet's
//     mounts, a tmpfs over /run, and the files covering the machine-wide sysctls the kubelet
//     checks at start (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops): with
//     protectKernelDefaults it reads the values it wants there and never writes the host's;
//   - a cgroup root (/sparkui-node-<id>) in every cgroup v1 hierarchy, removed at the end;
//   - a temporary directory: containerd's root, state and socket, the kubelet's root, Pod
//     logs, CNI configuration and IPAM state.
//
// The kubelet and the Pods reach the API server (which listens on the host's loopback)
// through a forwarder the harness runs: a listener created inside the node's network
// namespace at the gateway address and the API server's port, relaying to 127.0.0.1. The
// API server advertises that address, so the `kubernetes` Service's endpoint is the
// forwarder. The other way, the API server reaches the kubelet (logs, exec, port-forward)
// through an HTTP CONNECT proxy the harness serves on a unix socket, which its egress
// selector dials (egress.go). kube-proxy (iptables mode, inside the namespace) makes every
// ClusterIP real, that one included. Tests reach Pods and Services with Node.HTTPClient,
// whose sockets are made in the node's namespace.
//
// Stop (t.Cleanup) kills every process by PID (kubelet, kube-scheduler, containerd, its
// shims, every process in the node's cgroups, the namespace holder), removes the cgroups
// and the directory, and fails the test if any of it stays. A watchdog does the same if
// the test binary dies first. A missing prerequisite fails the test with the command that
// installs it; it is never skipped.
package testnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

const (
	// ServiceCIDR is the API server's Service range (envtest's --service-cluster-ip-range).
	ServiceCIDR = "10.0.0.0/24"
	// KubernetesServiceIP is the `kubernetes` Service's ClusterIP in that range.
	KubernetesServiceIP = "10.0.0.1"
	// DefaultSubnet is the Pod network when Options.Subnet is empty. It exists only inside
	// the node's network namespace, so runs side by side may use the same one.
	DefaultSubnet = "10.244.0.0/24"
	// CNIBinDir is where Debian's containernetworking-plugins installs the plugins.
	CNIBinDir = "/usr/lib/cni"

	readyTimeout = 2 * time.Minute
)

// NodeControllers are the kube-controller-manager controllers a node's control plane runs:
// testcluster's defaults (EndpointSlices, Endpoints, garbage collection) and what Pods with
// a ServiceAccount need (the default ServiceAccount, the kube-root-ca.crt ConfigMap their
// token volume projects), and the node lifecycle controller, which lifts the not-ready taint
// the kubelet registers its Node with (and taints a node that stops reporting).
var NodeControllers = append(append([]string{}, testcluster.DefaultControllers...),
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
	"node-lifecycle-controller",
)

// BinDir holds kubelet, kube-scheduler and kube-proxy: CacheDir()/node/<Version>.
func BinDir() string {
	return filepath.Join(testcluster.CacheDir(), "node", testcluster.Version)
}

// Options configures a node.
type Options struct {
	// Subnet is the node's Pod network (IPv4, a /16 to a /28); "" = DefaultSubnet. The
	// first address is the gateway (the bridge's), the API server's advertised address.
	Subnet string
	// Controllers are kube-controller-manager controllers run beside NodeControllers
	// (e.g. "deployment-controller", "replicaset-controller", "job-controller").
	Controllers []string
	// Images are imported into the node's containerd before it registers, besides the
	// pause image the harness always builds.
	Images []Image
	// NoKubeProxy leaves kube-proxy out: then only the `kubernetes` Service is reachable
	// (one DNAT rule to the API forwarder), no other ClusterIP.
	NoKubeProxy bool
	// CRDDirectoryPaths are CustomResourceDefinitions the control plane installs
	// (testcluster.Options.CRDDirectoryPaths), e.g. the Gateway API's.
	CRDDirectoryPaths []string
}

// Image is a single-platform image built by internal/ociimage from one static binary.
type Image struct {
	Ref    string // e.g. "sparkui.test/fakespark-ui:1"; a tag other than latest (IfNotPresent)
	Name   string // the binary's name in the image: /<Name>, the entrypoint
	Binary []byte
	// Paths are more absolute paths holding the same binary (e.g. /opt/spark/bin/spark-submit
	// for a manifest whose command names it), in a layer over the image's.
	Paths []string
	// Env is the image's environment (KEY=value), as a Dockerfile's ENV sets it.
	Env []string
	// Files are more files of the image (absolute path → content, mode 0644), in the layer
	// of Paths: e.g. the image's own $SPARK_HOME/conf/spark-defaults.conf.
	Files map[string]string
}

// Node is a running node.
type Node struct {
	Cluster *testcluster.Cluster
	// Name is the Node object's name.
	Name string
	// Dir holds the node's files (removed by Stop).
	Dir string
	// Subnet is the Pod network; Gateway its first address (the bridge, the node's IP).
	Subnet  netip.Prefix
	Gateway netip.Addr
	// CgroupRoot is the kubelet's cgroup root in every v1 hierarchy.
	CgroupRoot string
	// Started is when Start began; Ready how long until the Node was Ready.
	Started time.Time
	Ready   time.Duration

	id       string
	apiPort  int
	bridge   string
	holder   *proc
	holdPipe io.WriteCloser
	netns    string // /proc/<holder>/ns/net
	ctrd     *proc
	kubelet  *proc
	sched    *proc
	proxy    *proc
	fwd      net.Listener
	egress   net.Listener // the API server's CONNECT proxy to the node (egress.go)
	fwdWG    sync.WaitGroup
	watchdog *exec.Cmd
	wdPipe   io.WriteCloser

	stopOnce sync.Once
	stopErr  error
}

// proc is a process the harness started and waits for.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(sigterm)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Start starts a control plane for the node (testcluster.Start with the API server's
// certificate valid for the node's addresses, its connections to the node through the
// harness (NodeEgress: egress.go), the ServiceAccount admission plugin on, and
// NodeControllers), then the node, and waits until the Node is Ready. Everything stops in
// t.Cleanup.
func Start(t testing.TB, opts Options) *Node {
	t.Helper()
	if err := Prerequisites(); err != nil {
		t.Fatalf("%v", err)
	}
	subnet := opts.Subnet
	if subnet == "" {
		subnet = DefaultSubnet
	}
	pfx, err := netip.ParsePrefix(subnet)
	if err != nil || !pfx.Addr().Is4() || pfx.Bits() < 16 || pfx.Bits() > 28 {
		t.Fatalf("testnode: Options.Subnet %q: want an IPv4 prefix from /16 to /28", subnet)
	}
	pfx = pfx.Masked()
	gw := pfx.Addr().Next()

	c := testcluster.Start(t, testcluster.Options{
		ControllerManager: true,
		Controllers:       append(append([]string{}, NodeControllers...), opts.Controllers...),
		ServingIPs:        []string{KubernetesServiceIP, gw.String()},
		NodeEgress:        true,
		CRDDirectoryPaths: opts.CRDDirectoryPaths,
		APIServerArgs: map[string][]string{
			// envtest turns the ServiceAccount admission plugin off; a node's Pods need it
			// (their token volume). Turning off one that changes nothing here instead.
			"disable-admission-plugins": {"DefaultStorageClass"},
			// The `kubernetes` Service's endpoint: the forwarder inside the node.
			"advertise-address": {gw.String()},
		},
	})

	n, err := start(c, pfx, gw, opts)
	if n != nil {
		t.Cleanup(func() {
			if err := n.Stop(); err != nil {
				t.Errorf("testnode: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatalf("testnode: %v", err)
	}
	t.Logf("testnode: node %s Ready %s after start (subnet %s, dir %s)", n.Name, n.Ready.Round(time.Millisecond), n.Subnet, n.Dir)
	return n
}

// Prerequisites reports what the machine lacks to run a node, with the command that fixes it.
func Prerequisites() error {
	var fixes []string
	if os.Geteuid() != 0 {
		return errors.New("testnode: a node needs root (namespaces, cgroups, containerd)")
	}
	var pkgs []string
	for _, c := range []struct{ bin, pkg string }{
		{"containerd", "containerd"}, {"ctr", "containerd"}, {"runc", "runc"},
		{"iptables", "iptables"}, {"ip", "iproute2"}, {"unshare", "util-linux"}, {"nsenter", "util-linux"},
	} {
		if _, err := exec.LookPath(c.bin); err != nil {
			pkgs = append(pkgs, c.pkg)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(CNIBinDir, p)); err != nil {
			pkgs = append(pkgs, "containernetworking-plugins")
			break
		}
	}
	if len(pkgs) > 0 {
		fixes = append(fixes, "apt-get update && apt-get install -y "+strings.Join(dedup(pkgs), " "))
	}
	var missing []string
	for _, b := range []string{"kubelet", "kube-scheduler", "kube-proxy"} {
		st, err := os.Stat(filepath.Join(BinDir(), b))
		if err != nil || st.Mode()&0o111 == 0 || st.Size() == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		fixes = append(fixes, fmt.Sprintf("make node (testkit/testcluster/build.sh node) to build %s into %s",
			strings.Join(missing, ", "), BinDir()))
	}
	if len(fixes) > 0 {
		return fmt.Errorf("testnode: the machine cannot run a node yet; run: %s", strings.Join(fixes, "; "))
	}
	return nil
}

func dedup(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func start(c *testcluster.Cluster, pfx netip.Prefix, gw netip.Addr, opts Options) (_ *Node, retErr error) {
	id := fmt.Sprintf("%06x", rand.IntN(1<<24))
	dir, err := os.MkdirTemp("", "sparkui-node-"+id+"-")
	if err != nil {
		return nil, err
	}
	n := &Node{
		Cluster: c, Name: "sparkui-node-" + id, Dir: dir, Subnet: pfx, Gateway: gw,
		CgroupRoot: "/sparkui-node-" + id, Started: time.Now(), id: id, bridge: "suibr" + id,
	}
	apiURL, err := neturl(c.Config.Host)
	if err != nil {
		return n, err
	}
	if n.apiPort, err = strconv.Atoi(apiURL.Port()); err != nil {
		return n, fmt.Errorf("API server port in %q: %w", c.Config.Host, err)
	}
	if err := n.startWatchdog(); err != nil {
		return n, err
	}
	for _, d := range []string{"containerd/root", "containerd/state", "containerd/opt", "net.d", "cni", "kubelet", "kubelet-pki", "pod-logs", "sysctl", "images"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return n, err
		}
	}
	if err := n.makeCgroups(); err != nil {
		return n, err
	}
	if err := n.startHolder(); err != nil {
		return n, err
	}
	if err := n.setupNamespace(opts.NoKubeProxy); err != nil {
		return n, err
	}
	if err := n.startForwarder(); err != nil {
		return n, err
	}
	if err := n.startEgress(); err != nil {
		return n, err
	}
	if err := n.startContainerd(); err != nil {
		return n, err
	}
	pause, err := buildPause()
	if err != nil {
		return n, err
	}
	imgs := append([]Image{{Ref: PauseImage, Name: "pause", Binary: pause}}, opts.Images...)
	for _, img := range imgs {
		if err := n.ImportImage(img); err != nil {
			return n, err
		}
	}
	if err := n.startKubelet(); err != nil {
		return n, err
	}
	if err := n.startScheduler(); err != nil {
		return n, err
	}
	if !opts.NoKubeProxy {
		if err := n.startKubeProxy(); err != nil {
			return n, err
		}
	}
	if err := n.waitReady(); err != nil {
		return n, err
	}
	n.Ready = time.Since(n.Started)
	return n, nil
}

// logPath is the file a component logs to.
func (n *Node) logPath(name string) string { return filepath.Join(n.Dir, name+".log") }

func (n *Node) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	last := "not registered"
	for {
		for _, p := range []*proc{n.ctrd, n.kubelet, n.sched, n.proxy} {
			if p != nil && !p.running() {
				return fmt.Errorf("%s exited: %v%s", p.name, p.cmd.ProcessState, logTail(p.log))
			}
		}
		node, err := n.Cluster.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err == nil {
			last = "no Ready condition"
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					if cond.Status == corev1.ConditionTrue {
						return nil
					}
					last = fmt.Sprintf("Ready=%s: %s", cond.Status, cond.Message)
				}
			}
		} else if !apierrors.IsNotFound(err) {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready after %s (%s)%s", n.Name, readyTimeout, last, logTail(n.kubelet.log))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func neturl(host string) (*urlParts, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
	h = strings.TrimSuffix(h, "/")
	hostname, port, err := net.SplitHostPort(h)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", host, err)
	}
	return &urlParts{host: hostname, port: port}, nil
}

type urlParts struct{ host, port string }

func (u *urlParts) Port() string { return u.port }

// kubeconfigAt is an admin kubeconfig whose server is host (the forwarder, inside the node).
func (n *Node) kubeconfigAt(host string) ([]byte, error) {
	cfg := rest.CopyConfig(n.Cluster.Config)
	cfg.Host = host
	return testcluster.KubeconfigFor(cfg)
}
