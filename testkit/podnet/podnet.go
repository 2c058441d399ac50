// Package podnet runs processes the way a Pod's containers run with respect to the network: in
// a network namespace of their own whose only interface is lo, reaching the API server through
// a relay, as runtime/blackbox and testkit/scale need. We do not model a CNI: a Pod network
// here has lo only, so a runtime in it sees exactly the listening sockets of its own Pod.
//
// The API server is reached on lo at its own host:port (what the kubeconfig names), forwarded
// to a unix socket that the test process relays to the real API server: the filesystem is
// shared with the host, the network is not.
package podnet

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Relay copies between c and a connection from dial until either side closes.
func Relay(c net.Conn, dial func() (net.Conn, error)) {
	defer c.Close()
	d, err := dial()
	if err != nil {
		return
	}
	defer d.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(d, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, d); done <- struct{}{} }()
	<-done
}

var (
	unshareOnce sync.Once
	unshareErr  error
)

// CheckUnshare reports why a Pod network cannot be made here: util-linux unshare and
// unprivileged user namespaces are needed (sysctl kernel.unprivileged_userns_clone=1 on Debian
// kernels, user.max_user_namespaces > 0), and ip(8).
func CheckUnshare() error {
	unshareOnce.Do(func() {
		if out, err := exec.Command("unshare", "-rn", "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			unshareErr = fmt.Errorf("a driver Pod's own network needs `unshare -rn` (unprivileged user and network namespaces) and `ip`: %v: %s", err, out)
		}
	})
	return unshareErr
}

var apiRelays struct {
	sync.Mutex
	socks map[string]string
	lns   []net.Listener
}

// CloseRelays stops every APIRelay of the process and removes their sockets.
func CloseRelays() {
	apiRelays.Lock()
	defer apiRelays.Unlock()
	for _, ln := range apiRelays.lns {
		_ = ln.Close()
	}
	for _, s := range apiRelays.socks {
		_ = os.RemoveAll(filepath.Dir(s))
	}
	apiRelays.lns, apiRelays.socks = nil, nil
}

// APIRelay is the unix socket, one per process and API server address, that this process
// relays to hostport (the API server's); every Pod network of the process dials it.
func APIRelay(hostport string) (string, error) {
	apiRelays.Lock()
	defer apiRelays.Unlock()
	if s, ok := apiRelays.socks[hostport]; ok {
		return s, nil
	}
	dir, err := os.MkdirTemp("", "sui-api")
	if err != nil {
		return "", err
	}
	sock := filepath.Join(dir, "api.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return "", err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go Relay(conn, func() (net.Conn, error) {
				d, err := net.Dial("tcp", hostport)
				noteDial(conn, err)
				return d, err
			})
		}
	}()
	if apiRelays.socks == nil {
		apiRelays.socks = map[string]string{}
	}
	apiRelays.socks[hostport] = sock
	apiRelays.lns = append(apiRelays.lns, ln)
	return sock, nil
}

var apiDials struct {
	sync.Mutex
	fn func(pid int, at time.Time, err error)
}

// ObserveAPIDials has fn told of every connection a Pod network opens to the API server
// through an APIRelay of this process, until stop is called: the pid of the process that
// dialed the relay's socket (podnet in that Pod network: the peer's credentials), when, and
// the relay's error reaching the API server (nil when it did). A client's requests while the
// API server is away never reach its audit log; each of them is one such connection (a
// broken connection is not reused), which is how a test counts them.
func ObserveAPIDials(fn func(pid int, at time.Time, err error)) (stop func()) {
	apiDials.Lock()
	apiDials.fn = fn
	apiDials.Unlock()
	return func() {
		apiDials.Lock()
		apiDials.fn = nil
		apiDials.Unlock()
	}
}

func noteDial(c net.Conn, err error) {
	apiDials.Lock()
	fn := apiDials.fn
	apiDials.Unlock()
	if fn != nil {
		fn(peerPID(c), time.Now(), err)
	}
}

// ServeAPI, inside a Pod network, brings lo up and forwards hostport on it to the unix socket
// sock (APIRelay's, in the host's network).
func ServeAPI(hostport, sock string) error {
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set lo up: %v: %s", err, out)
	}
	ln, err := net.Listen("tcp", hostport)
	if err != nil {
		return err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go Relay(c, func() (net.Conn, error) { return net.Dial("unix", sock) })
		}
	}()
	return nil
}

// ContainerEnv resolves the container's env as the kubelet does for the fields sparkui uses:
// values, and downward-API fieldRefs read from the Pod as created (metadata.name, namespace,
// uid, metadata.labels['k'] — "" when the Pod lacks the label —, status.hostIP, status.podIP).
func ContainerEnv(pod *corev1.Pod, c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef == nil {
				return nil, fmt.Errorf("pod %s container %s: env %s: only fieldRef is resolved here: %+v", pod.Name, c.Name, e.Name, e.ValueFrom)
			}
			switch p := e.ValueFrom.FieldRef.FieldPath; {
			case p == "metadata.name":
				v = pod.Name
			case p == "metadata.namespace":
				v = pod.Namespace
			case p == "metadata.uid":
				v = string(pod.UID)
			case p == "status.hostIP":
				v = pod.Status.HostIP
			case p == "status.podIP":
				v = pod.Status.PodIP
			case strings.HasPrefix(p, "metadata.labels['") && strings.HasSuffix(p, "']"):
				v = pod.Labels[strings.TrimSuffix(strings.TrimPrefix(p, "metadata.labels['"), "']")]
			default:
				return nil, fmt.Errorf("pod %s container %s: env %s: fieldPath %q not resolved here", pod.Name, c.Name, e.Name, p)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// ExpandArgs expands $(VAR) in args from env as the kubelet does (third_party/forked/golang/
// expansion in kubernetes/kubernetes): a defined variable is replaced by its value (empty
// included), an undefined reference is left as is, $$ is a literal $.
func ExpandArgs(args, env []string) []string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(m string) string {
			if m == "$$" {
				return "$"
			}
			if v, ok := vars[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}
