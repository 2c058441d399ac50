package testnode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// nsenter returns the command that runs argv inside the node's network and mount namespaces.
func (n *Node) nsenter(argv ...string) *exec.Cmd {
	args := append([]string{"--target", strconv.Itoa(n.holder.cmd.Process.Pid), "--net", "--mount", "--"}, argv...)
	return exec.Command("nsenter", args...)
}

// InNode runs argv inside the node's namespaces and returns its combined output.
func (n *Node) InNode(argv ...string) (string, error) {
	out, err := n.nsenter(argv...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// spawn starts a long-running component logging to its file.
func (n *Node) spawn(name string, cmd *exec.Cmd) (*proc, error) {
	f, err := os.Create(n.logPath(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: f.Name(), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// startHolder starts the process that holds the node's network and mount namespaces: a
// shell reading a pipe only this process writes, so it ends with the test binary.
func (n *Node) startHolder() error {
	cmd := exec.Command("unshare", "--net", "--mount", "--propagation", "private", "--",
		"/bin/sh", "-c", "while read -r _x; do :; done", "sparkui-node-holder", n.Dir)
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	p, err := n.spawn("holder", cmd)
	if err != nil {
		return err
	}
	n.holder, n.holdPipe = p, w
	n.netns = fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid)
	// unshare execs the shell once the namespaces exist: wait for the new network namespace.
	self, _ := os.Readlink("/proc/self/ns/net")
	for i := 0; ; i++ {
		ns, err := os.Readlink(n.netns)
		if err == nil && ns != self {
			return nil
		}
		if !p.running() || i > 200 {
			return fmt.Errorf("the namespace holder did not start%s", logTail(p.log))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kubeletSysctls are the machine-wide values the kubelet checks at start
// (pkg/kubelet/cm/container_manager_linux.go setupKernelTunables) that differ from a plain
// machine's; the files holding them cover /proc/sys in the node's mount namespace.
var kubeletSysctls = map[string]string{
	"vm/overcommit_memory":      "1",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

func (n *Node) setupNamespace(dnat bool) error {
	var script strings.Builder
	fmt.Fprintf(&script, "set -e\n")
	fmt.Fprintf(&script, "ip link set lo up\n")
	fmt.Fprintf(&script, "ip link add %s type bridge\n", n.bridge)
	fmt.Fprintf(&script, "ip addr add %s/%d dev %s\n", n.Gateway, n.Subnet.Bits(), n.bridge)
	fmt.Fprintf(&script, "ip link set %s up\n", n.bridge)
	// hostNetwork Pods (in this namespace) reach the Service range through the bridge; the
	// nat OUTPUT rule below rewrites the destination before it leaves.
	fmt.Fprintf(&script, "ip route add %s dev %s\n", ServiceCIDR, n.bridge)
	fmt.Fprintf(&script, "mount -t tmpfs -o mode=0755,size=64m sparkui-node-run /run\n")
	for name, v := range kubeletSysctls {
		f := filepath.Join(n.Dir, "sysctl", strings.ReplaceAll(name, "/", "."))
		if err := os.WriteFile(f, []byte(v+"\n"), 0o444); err != nil {
			return err
		}
		fmt.Fprintf(&script, "mount --bind %s /proc/sys/%s\n", f, name)
	}
	if dnat {
		to := fmt.Sprintf("%s:%d", n.Gateway, n.apiPort)
		for _, chain := range []string{"PREROUTING", "OUTPUT"} {
			fmt.Fprintf(&script, "iptables -w -t nat -A %s -d %s/32 -p tcp --dport 443 -j DNAT --to-destination %s\n", chain, KubernetesServiceIP, to)
		}
	}
	if _, err := n.InNode("/bin/sh", "-c", script.String()); err != nil {
		return fmt.Errorf("setting up the node's namespaces: %w", err)
	}
	return nil
}

// startForwarder listens inside the node's network namespace at the gateway address and the
// API server's port, and relays each connection to the API server on the host's loopback.
func (n *Node) startForwarder() error {
	l, err := inNetns(n, func() (net.Listener, error) {
		return net.Listen("tcp", fmt.Sprintf("%s:%d", n.Gateway, n.apiPort))
	})
	if err != nil {
		return fmt.Errorf("API forwarder: %w", err)
	}
	n.fwd = l
	target := fmt.Sprintf("127.0.0.1:%d", n.apiPort)
	n.fwdWG.Add(1)
	go func() {
		defer n.fwdWG.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go relay(in, target)
		}
	}()
	return nil
}

func relay(in net.Conn, target string) {
	defer in.Close()
	out, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); closeWrite(out); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); closeWrite(in); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// DialContext dials from inside the node's network namespace (Pod IPs, hostNetwork ports).
func (n *Node) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return inNetns(n, func() (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	})
}

// HTTPClient is a client whose connections start inside the node's network namespace.
func (n *Node) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DialContext: n.DialContext, DisableKeepAlives: true},
	}
}
