package testnode

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"time"
)

// The API server's way to the kubelet. The kubelet listens in the node's network namespace,
// which the API server (on the host's) cannot route to, so the control plane is started with
// testcluster.Options.NodeEgress: kube-apiserver sends every connection to a node through an
// HTTP CONNECT proxy on a unix socket, served here. A CONNECT to the node's subnet (the
// kubelet at the node's InternalIP, Pod IPs) or the Service range is dialled inside the
// node's namespace; any other address from the host's, as without the proxy. That is the
// whole path of `kubectl logs`, `exec` and `port-forward`: client → API server → this proxy
// → the kubelet (its client CA is the cluster's, clientCAFile below) → containerd's streaming
// server on the node's loopback → the Pod's network namespace.

// clientCAFile is the kubelet's x509 client CA: the cluster's CA, which signed the API
// server's kubelet client certificate.
func (n *Node) clientCAFile() string { return filepath.Join(n.Dir, "kubelet-client-ca.crt") }

func (n *Node) startEgress() error {
	if err := os.WriteFile(n.clientCAFile(), n.Cluster.Env.ControlPlane.APIServer.SecureServing.CA, 0o644); err != nil {
		return err
	}
	sock := n.Cluster.NodeEgressSocket()
	if sock == "" {
		return fmt.Errorf("the control plane was started without NodeEgress")
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("node egress proxy: %w", err)
	}
	n.egress = l
	svc := netip.MustParsePrefix(ServiceCIDR)
	n.fwdWG.Add(1)
	go func() {
		defer n.fwdWG.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go n.connect(c, svc)
		}
	}()
	return nil
}

// connect answers one CONNECT request and relays the connection.
func (n *Node) connect(in net.Conn, svc netip.Prefix) {
	defer in.Close()
	_ = in.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(in)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = in.SetReadDeadline(time.Time{})
	if req.Method != http.MethodConnect {
		fmt.Fprintf(in, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	target := req.Host
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out net.Conn
	if ap, err := netip.ParseAddrPort(target); err == nil && (n.Subnet.Contains(ap.Addr()) || svc.Contains(ap.Addr())) {
		out, err = n.DialContext(ctx, "tcp", target)
		if err != nil {
			fmt.Fprintf(in, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
	} else {
		var d net.Dialer
		if out, err = d.DialContext(ctx, "tcp", target); err != nil {
			fmt.Fprintf(in, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
	}
	defer out.Close()
	if _, err := io.WriteString(in, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, br); closeWrite(out); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); closeWrite(in); done <- struct{}{} }()
	<-done
	<-done
}
