package testnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// What tests run beside the node's own components: commands inside its namespaces (a
// Gateway implementation, `ctr` against its containerd) and its containers' cgroup files.

// Command is argv to run inside the node's network and mount namespaces (nsenter, which
// execs argv: a Pdeathsig set on the returned command reaches argv itself). Sockets it opens
// live on the node's network: Pod IPs, ClusterIPs through kube-proxy's rules, the API server
// at the forwarder (Kubeconfig).
func (n *Node) Command(argv ...string) *exec.Cmd { return n.nsenter(argv...) }

// Kubeconfig is an admin kubeconfig for processes on the node's network: its server is the
// API forwarder at the node's address (the API server's loopback is not reachable there).
func (n *Node) Kubeconfig() ([]byte, error) {
	return n.kubeconfigAt(fmt.Sprintf("https://%s:%d", n.Gateway, n.apiPort))
}

// ContainerdSocket is the node's containerd socket (its CRI plugin's images are in namespace
// k8s.io).
func (n *Node) ContainerdSocket() string { return n.socket() }

// ContainerCgroupFile reads one file of a container's cgroup in a v1 hierarchy ("memory",
// "cpuacct", …) under the kubelet's cgroupfs layout (<root>/kubepods[/<qos>]/pod<uid>/<id>).
// containerID is the status's "containerd://<id>".
func (n *Node) ContainerCgroupFile(hierarchy, podUID, containerID, file string) (string, error) {
	id := containerID[strings.Index(containerID, "://")+3:]
	base := filepath.Join(cgroupFS, hierarchy, n.CgroupRoot, "kubepods")
	var dirs []string
	for _, pat := range []string{"pod" + podUID, "*/pod" + podUID} {
		m, _ := filepath.Glob(filepath.Join(base, pat, id))
		dirs = append(dirs, m...)
	}
	if len(dirs) != 1 {
		return "", fmt.Errorf("%s cgroup of container %s of Pod %s: found %v", hierarchy, id, podUID, dirs)
	}
	data, err := os.ReadFile(filepath.Join(dirs[0], file))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// ContainerCPU is the CPU time a container's processes used so far, in nanoseconds (cgroup v1
// cpuacct.usage: user and system, every CPU).
func (n *Node) ContainerCPU(podUID, containerID string) (int64, error) {
	v, err := n.ContainerCgroupFile("cpuacct", podUID, containerID, "cpuacct.usage")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}
