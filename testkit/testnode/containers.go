package testnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// PrepareNamespace makes ns (if missing) and waits for what its Pods need from the
// controllers: the default ServiceAccount and the kube-root-ca.crt ConfigMap.
func (n *Node) PrepareNamespace(t testing.TB, ns string) {
	t.Helper()
	n.Cluster.EnsureNamespace(t, ns)
	ctx := testcluster.Context(t, time.Minute)
	testcluster.WaitFor(t, time.Minute, "namespace "+ns+" ready for Pods", func() (bool, string) {
		if _, err := n.Cluster.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, "ServiceAccount default: " + err.Error()
		}
		if _, err := n.Cluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
			return false, "ConfigMap kube-root-ca.crt: " + err.Error()
		}
		return true, ""
	})
}

// PodLog returns what container ctr of the Pod ns/name wrote so far (every restart, in
// order), read from the kubelet's log files.
func (n *Node) PodLog(ns, name, ctr string) (string, error) {
	return n.PodLogOf(ns, name, "*", ctr)
}

// PodLogOf is PodLog of the Pod with that UID only: a StatefulSet's replacement Pod has the
// name of the one it replaces, whose log directory (<ns>_<name>_<uid>) the kubelet may not
// have removed yet.
func (n *Node) PodLogOf(ns, name, uid, ctr string) (string, error) {
	dirs, err := filepath.Glob(filepath.Join(n.Dir, "pod-logs", ns+"_"+name+"_"+uid, ctr))
	if err != nil || len(dirs) == 0 {
		return "", fmt.Errorf("no log directory for %s/%s container %s", ns, name, ctr)
	}
	var b strings.Builder
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.log"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			b.Write(data)
		}
	}
	return b.String(), nil
}

// KubeletLog is the kubelet's log so far (for failure messages).
func (n *Node) KubeletLog() string {
	data, _ := os.ReadFile(n.logPath("kubelet"))
	return string(data)
}

func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return ""
	}
	const max = 4000
	if len(data) > max {
		data = data[len(data)-max:]
	}
	return fmt.Sprintf("\n--- last lines of %s ---\n%s", filepath.Base(path), data)
}

// containerCgroup is a container's directory in the memory hierarchy.
func (n *Node) containerCgroup(podUID, containerID string) (string, error) {
	id := containerID[strings.Index(containerID, "://")+3:]
	base := filepath.Join(cgroupFS, "memory", n.CgroupRoot, "kubepods")
	var dirs []string
	for _, pat := range []string{"pod" + podUID, "*/pod" + podUID} {
		m, _ := filepath.Glob(filepath.Join(base, pat, id))
		dirs = append(dirs, m...)
	}
	if len(dirs) != 1 {
		return "", fmt.Errorf("memory cgroup of container %s of Pod %s: found %v", id, podUID, dirs)
	}
	return dirs[0], nil
}

// KillContainer sends SIGKILL to every process of a running container (a crash: no preStop,
// no SIGTERM); the kubelet then restarts it as its restart policy says.
func (n *Node) KillContainer(podUID, containerID string) error {
	dir, err := n.containerCgroup(podUID, containerID)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	pids := strings.Fields(string(data))
	if len(pids) == 0 {
		return fmt.Errorf("container %s has no process", containerID)
	}
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		if err != nil {
			return err
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("kill %d: %w", pid, err)
		}
	}
	return nil
}

// ContainerMemory reads a running container's memory cgroup (cgroup v1, the kubelet's
// cgroupfs layout under the node's root): the RSS of its processes now (memory.stat
// total_rss) and the peak of the cgroup's usage, page cache included
// (memory.max_usage_in_bytes). containerID is the status's "containerd://<id>".
func (n *Node) ContainerMemory(podUID, containerID string) (rss, peak int64, err error) {
	dir, err := n.containerCgroup(podUID, containerID)
	if err != nil {
		return 0, 0, err
	}
	stat, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "total_rss "); ok {
			rss, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	p, err := os.ReadFile(filepath.Join(dir, "memory.max_usage_in_bytes"))
	if err != nil {
		return 0, 0, err
	}
	peak, _ = strconv.ParseInt(strings.TrimSpace(string(p)), 10, 64)
	return rss, peak, nil
}
