// Package gatewaytest runs a real Gateway API implementation for tests: Traefik's Kubernetes
// Gateway provider, built from its Go module by build-traefik.sh (`make traefik`), against a
// testcluster control plane with the Gateway API standard CRDs read from the Go module
// sigs.k8s.io/gateway-api.
//
// A missing Traefik binary fails the test: it is never skipped.
//
// Versions: Traefik v3.6.12 (v3.7 cannot be built from Go modules: build-traefik.sh says why),
// whose go.mod requires sigs.k8s.io/gateway-api v1.4.0. Its provider waits for the informers
// of GatewayClass, Gateway, HTTPRoute, GRPCRoute, BackendTLSPolicy (v1) and ReferenceGrant
// (v1beta1) to sync before it does anything (pkg/provider/kubernetes/gateway/client.go,
// WatchAll), so the CRDs must serve exactly those versions: the standard channel of v1.4.0
// does (config/crd/standard).
package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

const (
	// TraefikVersion is the Traefik release build-traefik.sh builds.
	TraefikVersion = "v3.6.12"
	// GatewayAPIVersion is the sigs.k8s.io/gateway-api module whose standard CRDs are
	// installed: the one TraefikVersion is built against.
	GatewayAPIVersion = "v1.4.0"
	// ControllerName is Traefik's GatewayClass controllerName
	// (pkg/provider/kubernetes/gateway/kubernetes.go, controllerName).
	ControllerName = "traefik.io/gateway-controller"
	// ClassLabel selects the GatewayClass of one Gateway: each Traefik started here only
	// takes the class carrying its own value (providers.kubernetesGateway.labelSelector), so
	// tests sharing a control plane do not program each other's Gateways.
	ClassLabel = "sparkui.dev/gatewaytest"
)

// GVRs of the Gateway API kinds the harness writes or reads.
var (
	GatewayClasses = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	Gateways       = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	HTTPRoutes     = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	GRPCRoutes     = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}
)

// TraefikBinary is where build-traefik.sh caches the binary:
// ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/traefik/<TraefikVersion>/traefik.
func TraefikBinary() string {
	return filepath.Join(testcluster.CacheDir(), "traefik", TraefikVersion, "traefik")
}

var crdDir struct {
	once sync.Once
	dir  string
	err  error
}

// CRDDir is the directory of the standard-channel CRDs in the module cache's
// sigs.k8s.io/gateway-api@GatewayAPIVersion, downloaded through the module proxy when absent.
// Read in place, unmodified: nothing is copied into the repository.
func CRDDir(t testing.TB) string {
	t.Helper()
	crdDir.once.Do(func() {
		cmd := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/gateway-api@"+GatewayAPIVersion)
		// Outside any module: the project's go.mod does not (and need not) require it.
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			crdDir.err = fmt.Errorf("go mod download sigs.k8s.io/gateway-api@%s: %v\n%s%s", GatewayAPIVersion, err, out, stderr.Bytes())
			return
		}
		var m struct{ Dir, Error string }
		if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
			crdDir.err = fmt.Errorf("go mod download sigs.k8s.io/gateway-api@%s: %v %s\n%s", GatewayAPIVersion, err, m.Error, out)
			return
		}
		crdDir.dir = filepath.Join(m.Dir, "config", "crd", "standard")
	})
	if crdDir.err != nil {
		t.Fatal(crdDir.err)
	}
	return crdDir.dir
}

// ClusterOptions is a control plane for Traefik: kube-controller-manager (EndpointSlices,
// which Traefik reads for a Service's backends) and the Gateway API CRDs.
func ClusterOptions(t testing.TB) testcluster.Options {
	return testcluster.Options{ControllerManager: true, CRDDirectoryPaths: []string{CRDDir(t)}}
}

// Gateway is a running Traefik programming one Gateway of its own.
type Gateway struct {
	// Namespace and Name of the Gateway object, for HTTPRoute parentRefs.
	Namespace, Name string
	// Listener is the Gateway's one listener (protocol HTTP, routes from its namespace).
	Listener string
	// URL is where the Gateway answers: http://127.0.0.1:<port>.
	URL string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	out  bytes.Buffer
}

func (g *Gateway) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out.Write(b)
}

// Logs is Traefik's output so far.
func (g *Gateway) Logs() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out.String()
}

// Start creates a GatewayClass for Traefik's controllerName and a Gateway named "gateway" in
// ns with one HTTP listener on a free local port, runs Traefik with its Kubernetes Gateway
// provider watching ns (an entrypoint on that port, the cluster's admin kubeconfig), and
// returns once Traefik reports the class and the Gateway accepted and programmed. Traefik is
// stopped in t.Cleanup.
func Start(t testing.TB, c *testcluster.Cluster, ns string) *Gateway {
	t.Helper()
	return StartWith(t, c, ns, Options{})
}

// Options run Traefik elsewhere than on the machine's loopback: e.g. on a test node's network
// (testkit/testnode), where Pod IPs are reachable.
type Options struct {
	// Host is the address the entrypoint listens on and URL names; "" = 127.0.0.1.
	Host string
	// Command makes the command that runs argv (nil: exec.Command), e.g. inside a node's
	// namespaces; it must exec argv so that the process started is Traefik itself.
	Command func(argv ...string) *exec.Cmd
	// Kubeconfig is the kubeconfig Traefik uses (nil: the cluster's admin kubeconfig on the
	// machine's loopback).
	Kubeconfig []byte
}

// StartWith is Start with Traefik run as opts say.
func StartWith(t testing.TB, c *testcluster.Cluster, ns string, opts Options) *Gateway {
	t.Helper()
	bin := TraefikBinary()
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 || st.Size() == 0 {
		t.Fatalf("gatewaytest: Traefik %s missing at %s: run `make traefik` (testkit/gatewaytest/build-traefik.sh)", TraefikVersion, bin)
	}
	port, err := testcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	g := &Gateway{Namespace: ns, Name: "gateway", Listener: "web", URL: "http://" + net.JoinHostPort(host, strconv.Itoa(port)), done: make(chan struct{})}
	class := "traefik-" + ns
	ctx := testcluster.Context(t, 30*time.Second)

	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": class, "labels": map[string]any{ClassLabel: ns}},
		"spec":     map[string]any{"controllerName": ControllerName},
	}}
	if _, err := c.Dynamic.Resource(GatewayClasses).Create(ctx, gc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("gatewaytest: GatewayClass: %v", err)
	}
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": g.Name, "namespace": ns},
		"spec": map[string]any{
			"gatewayClassName": class,
			"listeners": []any{map[string]any{
				"name": g.Listener, "port": int64(port), "protocol": "HTTP",
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "Same"}},
			}},
		},
	}}
	if _, err := c.Dynamic.Resource(Gateways).Namespace(ns).Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatalf("gatewaytest: Gateway: %v", err)
	}

	// Static configuration by flags (Traefik's paerser flag names, case-insensitive). The
	// provider reads $KUBECONFIG when set and not in a Pod (kubernetes.go, newK8sClient).
	command := opts.Command
	if command == nil {
		command = func(argv ...string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
	}
	kubeconfig := c.KubeconfigFile(t, c.Config)
	if opts.Kubeconfig != nil {
		kubeconfig = filepath.Join(t.TempDir(), "traefik.kubeconfig")
		if err := os.WriteFile(kubeconfig, opts.Kubeconfig, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	g.cmd = command(bin,
		"--entryPoints."+g.Listener+".address="+net.JoinHostPort(host, strconv.Itoa(port)),
		"--providers.kubernetesGateway=true",
		"--providers.kubernetesGateway.namespaces="+ns,
		"--providers.kubernetesGateway.labelSelector="+ClassLabel+"="+ns,
		"--log.level=DEBUG",
		"--global.checkNewVersion=false",
		"--global.sendAnonymousUsage=false",
	)
	g.cmd.Env = append(envWithout("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"),
		"KUBECONFIG="+kubeconfig)
	g.cmd.Stdout, g.cmd.Stderr = g, g
	// Traefik dies with the test process, even when the cleanups do not run.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := g.cmd.Start(); err != nil {
		t.Fatalf("gatewaytest: starting Traefik: %v", err)
	}
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	t.Cleanup(func() {
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.done:
		case <-time.After(10 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.done
		}
		if t.Failed() {
			t.Logf("Traefik's log:\n%s", g.Logs())
		}
	})

	g.waitConditions(t, c, GatewayClasses, "", class, "GatewayClass "+class, "Accepted")
	g.waitConditions(t, c, Gateways, ns, g.Name, "Gateway "+ns+"/"+g.Name, "Accepted", "Programmed")
	return g
}

// waitConditions waits until the object's status.conditions has each of types with status
// True for its current generation.
func (g *Gateway) waitConditions(t testing.TB, c *testcluster.Cluster, gvr schema.GroupVersionResource, ns, name, what string, types ...string) {
	t.Helper()
	testcluster.WaitFor(t, 60*time.Second, what+" "+fmt.Sprint(types)+" by Traefik", func() (bool, string) {
		select {
		case <-g.done:
			t.Fatalf("Traefik exited: %v\n%s", g.cmd.ProcessState, g.Logs())
		default:
		}
		obj, err := get(c, gvr, ns, name)
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, ty := range types {
			if !hasCondition(conds, ty, "True", obj.GetGeneration()) {
				return false, fmt.Sprint(conds)
			}
		}
		return true, ""
	})
}

// RouteCondition is one condition of an HTTPRoute's status for its parent this Gateway.
type RouteCondition struct{ Type, Status, Reason, Message string }

// RouteConditions returns the conditions Traefik wrote on the HTTPRoute for this Gateway
// (status.parents[] with Traefik's controllerName and this Gateway as parentRef), for the
// route's current generation; nil when there are none yet.
func (g *Gateway) RouteConditions(t testing.TB, c *testcluster.Cluster, ns, name string) map[string]RouteCondition {
	t.Helper()
	return g.routeConditions(t, c, HTTPRoutes, ns, name)
}

// routeConditions is RouteConditions for a route of resource gvr: HTTPRoute and GRPCRoute
// share the status shape (RouteStatus).
func (g *Gateway) routeConditions(t testing.TB, c *testcluster.Cluster, gvr schema.GroupVersionResource, ns, name string) map[string]RouteCondition {
	t.Helper()
	obj, err := get(c, gvr, ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	parents, _, _ := unstructured.NestedSlice(obj.Object, "status", "parents")
	for _, p := range parents {
		pm, _ := p.(map[string]any)
		ctrl, _, _ := unstructured.NestedString(pm, "controllerName")
		ref, _, _ := unstructured.NestedString(pm, "parentRef", "name")
		refNS, _, _ := unstructured.NestedString(pm, "parentRef", "namespace")
		if ctrl != ControllerName || ref != g.Name || (refNS != "" && refNS != g.Namespace) {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(pm, "conditions")
		out := map[string]RouteCondition{}
		for _, cnd := range conds {
			cm, _ := cnd.(map[string]any)
			if gen, _, _ := unstructured.NestedInt64(cm, "observedGeneration"); gen != obj.GetGeneration() {
				return nil
			}
			var rc RouteCondition
			rc.Type, _, _ = unstructured.NestedString(cm, "type")
			rc.Status, _, _ = unstructured.NestedString(cm, "status")
			rc.Reason, _, _ = unstructured.NestedString(cm, "reason")
			rc.Message, _, _ = unstructured.NestedString(cm, "message")
			out[rc.Type] = rc
		}
		return out
	}
	return nil
}

// WaitRoute waits until Traefik's status on the HTTPRoute for this Gateway has the condition
// types with the given "Status/Reason" (e.g. "Accepted": "True/Accepted") and returns them.
func (g *Gateway) WaitRoute(t testing.TB, c *testcluster.Cluster, ns, name string, want map[string]string) map[string]RouteCondition {
	t.Helper()
	return g.waitRoute(t, c, HTTPRoutes, "HTTPRoute", ns, name, want)
}

// WaitGRPCRoute is WaitRoute for a GRPCRoute.
func (g *Gateway) WaitGRPCRoute(t testing.TB, c *testcluster.Cluster, ns, name string, want map[string]string) map[string]RouteCondition {
	t.Helper()
	return g.waitRoute(t, c, GRPCRoutes, "GRPCRoute", ns, name, want)
}

func (g *Gateway) waitRoute(t testing.TB, c *testcluster.Cluster, gvr schema.GroupVersionResource, kind, ns, name string, want map[string]string) map[string]RouteCondition {
	t.Helper()
	var got map[string]RouteCondition
	testcluster.WaitFor(t, 60*time.Second, fmt.Sprintf("%s %s/%s status %v by Traefik", kind, ns, name, want), func() (bool, string) {
		got = g.routeConditions(t, c, gvr, ns, name)
		for ty, sr := range want {
			if rc, ok := got[ty]; !ok || rc.Status+"/"+rc.Reason != sr {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
	return got
}

func get(c *testcluster.Cluster, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ns == "" {
		return c.Dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	}
	return c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

func hasCondition(conds []any, typ, status string, generation int64) bool {
	for _, c := range conds {
		m, _ := c.(map[string]any)
		ty, _, _ := unstructured.NestedString(m, "type")
		st, _, _ := unstructured.NestedString(m, "status")
		gen, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		if ty == typ && st == status && gen == generation {
			return true
		}
	}
	return false
}

func envWithout(keys ...string) []string {
	var env []string
next:
	for _, kv := range os.Environ() {
		for _, k := range keys {
			if len(kv) > len(k) && kv[:len(k)+1] == k+"=" {
				continue next
			}
		}
		env = append(env, kv)
	}
	return env
}

// HostAddress is a non-loopback IPv4 address of this machine, where a process listening on
// every address is reachable as a hostNetwork Pod is at its status.podIP. A machine without
// one fails the test.
func HostAddress(t testing.TB) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
				return ipn.IP.String()
			}
		}
	}
	t.Fatal("gatewaytest: this machine has no non-loopback IPv4 address for a hostNetwork driver Pod")
	return ""
}
