package testnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// The node's components: containerd, the kubelet, kube-scheduler.

// PauseImage is the sandbox image (containerd's sandbox_image), built by the harness.
const PauseImage = "sparkui.test/pause:1"

func (n *Node) socket() string { return filepath.Join(n.Dir, "containerd.sock") }

// containerdConfig is containerd 1.6's version 2 configuration: every path under the node's
// directory, its CRI plugin with the harness's pause image, cgroupfs, the CNI configuration
// of this node, and restrict_oom_score_adj (root here lacks CAP_SYS_RESOURCE, so runc could
// not lower the sandbox's oom_score_adj below the kubelet's).
func (n *Node) containerdConfig() string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[ttrpc]
  address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = %[4]q
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = %[5]q
    restrict_oom_score_adj = true
    disable_apparmor = true
    enable_selinux = false
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    # Pod network namespaces are bind-mounted under the state directory, not /run/netns.
    netns_mounts_under_state_dir = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = %[6]q
      conf_dir = %[7]q
      max_conf_num = 1
`, filepath.Join(n.Dir, "containerd/root"), filepath.Join(n.Dir, "containerd/state"), n.socket(),
		filepath.Join(n.Dir, "containerd/opt"), PauseImage, CNIBinDir, filepath.Join(n.Dir, "net.d"))
}

// cniConfig is the bridge network: the harness made the bridge and gave it the gateway
// address, so the plugin only attaches Pods (isGateway false: it touches no sysctl). Pods get
// a route to the Service range through the gateway and none other beside their subnet.
func (n *Node) cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "sparkui-node",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": %q, "gw": %q}]
      }
    }
  ]
}
`, n.bridge, filepath.Join(n.Dir, "cni"), n.Subnet.String(), n.Gateway.String(), ServiceCIDR, n.Gateway.String())
}

func (n *Node) startContainerd() error {
	cfg := filepath.Join(n.Dir, "containerd.toml")
	if err := os.WriteFile(cfg, []byte(n.containerdConfig()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.Dir, "net.d", "10-sparkui-node.conflist"), []byte(n.cniConfig()), 0o644); err != nil {
		return err
	}
	p, err := n.spawn("containerd", n.nsenter("containerd", "--config", cfg))
	if err != nil {
		return err
	}
	n.ctrd = p
	deadline := time.Now().Add(60 * time.Second)
	for {
		if !p.running() {
			return fmt.Errorf("containerd exited: %v%s", p.cmd.ProcessState, logTail(p.log))
		}
		if err := exec.Command("ctr", "--address", n.socket(), "version").Run(); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd did not answer on %s%s", n.socket(), logTail(p.log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kubeletConfig is the KubeletConfiguration: ports inside the node's network namespace,
// cgroupfs under the node's own cgroup root, cgroup v1 allowed (failCgroupV1: false: this
// machine has only v1 hierarchies), protectKernelDefaults (read the sysctls, never write
// them), the API server's client certificate accepted (egress.go), no image garbage
// collection and eviction thresholds low enough for a shared machine.
func (n *Node) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[5]s
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
cgroupRoot: %[2]s
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[3]s
imageServiceEndpoint: unix://%[3]s
protectKernelDefaults: true
podLogsDir: %[4]s
resolvConf: /etc/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
maxPods: 30
nodeStatusUpdateFrequency: 2s
syncFrequency: 5s
rotateCertificates: false
serverTLSBootstrap: false
registerNode: true
`, n.Gateway, n.CgroupRoot, n.socket(), filepath.Join(n.Dir, "pod-logs"), n.clientCAFile())
}

func (n *Node) startKubelet() error {
	cfg := filepath.Join(n.Dir, "kubelet.yaml")
	if err := os.WriteFile(cfg, []byte(n.kubeletConfig()), 0o644); err != nil {
		return err
	}
	kc, err := n.kubeconfigAt(fmt.Sprintf("https://%s:%d", n.Gateway, n.apiPort))
	if err != nil {
		return err
	}
	kcPath := filepath.Join(n.Dir, "kubelet.kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		return err
	}
	p, err := n.spawn("kubelet", n.nsenter(filepath.Join(BinDir(), "kubelet"),
		"--config="+cfg,
		"--kubeconfig="+kcPath,
		"--root-dir="+filepath.Join(n.Dir, "kubelet"),
		"--cert-dir="+filepath.Join(n.Dir, "kubelet-pki"),
		"--hostname-override="+n.Name,
		"--node-ip="+n.Gateway.String(),
		"--v=2",
	))
	if err != nil {
		return err
	}
	n.kubelet = p
	return nil
}

// RestartKubelet stops the kubelet (SIGTERM) and starts it again, Pods left running.
func (n *Node) RestartKubelet() error {
	n.kubelet.stop(10 * time.Second)
	return n.startKubelet()
}

// StopKubelet kills the kubelet (the node stops reporting; its Pods keep running).
func (n *Node) StopKubelet() {
	if n.kubelet != nil && n.kubelet.running() {
		_ = n.kubelet.cmd.Process.Kill()
		<-n.kubelet.done
	}
}

func (n *Node) startScheduler() error {
	kcPath := filepath.Join(n.Dir, "scheduler.kubeconfig")
	kc, err := testcluster.KubeconfigFor(n.Cluster.Config)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		return err
	}
	port, err := testcluster.FreePort()
	if err != nil {
		return err
	}
	p, err := n.spawn("kube-scheduler", exec.Command(filepath.Join(BinDir(), "kube-scheduler"),
		"--kubeconfig="+kcPath,
		"--authentication-kubeconfig="+kcPath,
		"--authorization-kubeconfig="+kcPath,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(n.Dir, "scheduler-certs"),
		"--v=2",
	))
	if err != nil {
		return err
	}
	n.sched = p
	return nil
}

// kubeProxyConfig runs kube-proxy in iptables mode inside the node's network namespace. Its
// conntrack settings are left alone (0: keep the kernel's), which are machine-wide.
func (n *Node) kubeProxyConfig() string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]s
hostnameOverride: %[2]s
clusterCIDR: %[3]s
mode: iptables
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, filepath.Join(n.Dir, "kubelet.kubeconfig"), n.Name, n.Subnet)
}

func (n *Node) startKubeProxy() error {
	cfg := filepath.Join(n.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(cfg, []byte(n.kubeProxyConfig()), 0o644); err != nil {
		return err
	}
	p, err := n.spawn("kube-proxy", n.nsenter(filepath.Join(BinDir(), "kube-proxy"), "--config="+cfg, "--v=2"))
	if err != nil {
		return err
	}
	n.proxy = p
	return nil
}

// inNetns runs f on a thread inside the node's network namespace: a socket keeps the
// namespace it was made in, so a listener or connection made there works from any thread.
func inNetns[T any](n *Node, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var zero T
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{zero, err}
			return
		}
		defer self.Close()
		target, err := os.Open(n.netns)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{zero, err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{zero, fmt.Errorf("setns: %w", err)}
			return
		}
		v, err := f()
		// Back to the host's namespace; a thread that cannot go back stays locked, and the
		// runtime ends it with this goroutine.
		if rerr := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); rerr == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{v, err}
	}()
	r := <-ch
	return r.v, r.err
}

// ctrImport imports an OCI layout tar into the node's containerd, in the namespace the CRI
// plugin uses.
func (n *Node) ctrImport(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", "--address", n.socket(), "-n", "k8s.io",
		"images", "import", "--platform", "linux/"+runtime.GOARCH, path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", path, err, strings.TrimSpace(string(out)))
	}
	return nil
}
