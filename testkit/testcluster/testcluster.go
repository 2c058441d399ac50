// Package testcluster starts a real Kubernetes control plane for tests: etcd and
// kube-apiserver through controller-runtime's envtest and, on request,
// kube-controller-manager (EndpointSlice, Endpoints and garbage-collector
// controllers) as a subprocess against the same API server.
//
// The binaries are built from Go modules by testkit/testcluster/build.sh
// (`make control-plane`) into Dir(). A missing binary fails the test: it is never
// skipped, so CI cannot go green without the real control plane.
//
// Two ways to get a cluster:
//
//   - Start(t, opts): a control plane of its own, stopped by t.Cleanup.
//
//   - Shared(t, opts): one control plane per test binary and Options, started on
//     first use and stopped when the package's tests end. It needs the package to
//     hand its TestMain to this package:
//
//     func TestMain(m *testing.M) { testcluster.Main(m) }
//
// Tests sharing a cluster should work in their own namespace (UniqueNamespace).
//
// The API server runs with envtest's defaults: authorization mode RBAC, client
// certificate authentication (so UserConfig can mint any user and groups), the
// ServiceAccount admission plugin disabled (Pods may name a ServiceAccount that
// does not exist and get no token volume injected), service-account issuer and
// signing keys configured (the TokenRequest API works).
//
// A test of what clients do while the API server is away stops it and starts it again on the
// same address, certificates and etcd (StopAPIServer, StartAPIServer; not on a Shared cluster).
//
// If the test process dies without running its cleanups (go test -timeout, a
// signal), a small watchdog kills etcd, kube-apiserver and kube-controller-manager
// so they do not outlive it.
package testcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Version is the Kubernetes version of the control plane binaries.
const Version = "v1.37.2"

// DefaultControllers are the kube-controller-manager controllers run when
// Options.ControllerManager is set and Options.Controllers is empty: EndpointSlices
// for Services with a selector, Endpoints (and their mirroring into EndpointSlices
// for Services without one, as on a real cluster), and garbage collection through
// ownerReferences.
var DefaultControllers = []string{
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"garbage-collector-controller",
}

const (
	startTimeout = 90 * time.Second // 2 busy cores: envtest's 20 s default is tight
	crdTimeout   = 60 * time.Second // envtest waits 10 s by default for CRDs to be served
	stopTimeout  = 30 * time.Second
)

// CacheDir is where the project's build scripts cache the tools the tests run:
// ${SPARKUI_CACHE:-$HOME/.cache/sparkui}.
func CacheDir() string {
	if base := os.Getenv("SPARKUI_CACHE"); base != "" {
		return base
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "sparkui")
}

// Dir is the directory holding the control plane binaries (kube-apiserver,
// kube-controller-manager, etcd): CacheDir()/control-plane/<Version>.
func Dir() string { return filepath.Join(CacheDir(), "control-plane", Version) }

// Options configures a cluster.
type Options struct {
	// ControllerManager also runs kube-controller-manager against the API server.
	ControllerManager bool
	// Controllers overrides DefaultControllers (kube-controller-manager --controllers).
	Controllers []string
	// APIServerArgs sets extra kube-apiserver flags (name without dashes → values),
	// replacing envtest's value for a flag it also sets.
	APIServerArgs map[string][]string
	// CRDDirectoryPaths are directories (or files) of CustomResourceDefinitions
	// (.yaml, .yml, .json) installed once the API server is up, through envtest's
	// CRDInstallOptions; the start waits until each is served. A missing path, or
	// paths holding no CRD at all, fails the start.
	CRDDirectoryPaths []string
	// ServingIPs are extra IP addresses in the API server's serving certificate (beside
	// 127.0.0.1 and localhost), for clients that reach it another way: a kubelet and the
	// Pods of a node (testkit/testnode) connect to the `kubernetes` Service's ClusterIP
	// (10.0.0.1 with envtest's Service range) and to the node's gateway. With it set, the
	// cluster's own CA signs that certificate, and the service-account signing key is
	// written next to it (envtest makes both only when the directory holds no certificate).
	ServingIPs []string
	// NodeEgress sends the API server's connections to nodes (kubelets: logs, exec,
	// port-forward; the proxy subresources) through an HTTP CONNECT proxy on the unix socket
	// Cluster.NodeEgressSocket, which the caller serves (testkit/testnode, whose kubelet
	// listens in a network namespace the API server cannot reach). The API server also
	// presents a client certificate to kubelets, signed by the cluster's CA (which needs
	// ServingIPs), in group system:masters, and addresses a Node by its InternalIP.
	NodeEgress bool
}

func (o Options) controllers() []string {
	if len(o.Controllers) > 0 {
		return o.Controllers
	}
	return DefaultControllers
}

// key identifies the Options for Shared.
func (o Options) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cm=%t", o.ControllerManager)
	if o.ControllerManager {
		fmt.Fprintf(&b, " controllers=%s", strings.Join(o.controllers(), ","))
	}
	if len(o.CRDDirectoryPaths) > 0 {
		fmt.Fprintf(&b, " crds=%s", strings.Join(o.CRDDirectoryPaths, ","))
	}
	if len(o.ServingIPs) > 0 {
		fmt.Fprintf(&b, " ips=%s", strings.Join(o.ServingIPs, ","))
	}
	if o.NodeEgress {
		fmt.Fprintf(&b, " node-egress")
	}
	names := make([]string, 0, len(o.APIServerArgs))
	for k := range o.APIServerArgs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, " --%s=%s", k, strings.Join(o.APIServerArgs[k], ","))
	}
	return b.String()
}

// Cluster is a running control plane.
type Cluster struct {
	addUserMu sync.Mutex
	// Config is an admin (system:masters) configuration.
	Config *rest.Config
	// Client is an admin clientset.
	Client kubernetes.Interface
	// Dynamic is an admin dynamic client.
	Dynamic dynamic.Interface
	// Env is the underlying envtest environment.
	Env *envtest.Environment
	// Mapper resolves kinds to resources from the API server's discovery.
	Mapper meta.ResettableRESTMapper

	dir        string // logs, kubeconfig, controller-manager certificates
	egressSock string // Options.NodeEgress: the socket the API server dials nodes through
	started    time.Time
	startedFor time.Duration
	kcm        *exec.Cmd
	kcmDone    chan struct{}
	watchdog   *exec.Cmd
	wdPipe     io.WriteCloser

	stopOnce sync.Once
	stopErr  error

	apiMu   sync.Mutex // StopAPIServer, StartAPIServer
	apiDown bool
	shared  bool // made by Shared: its API server is not restarted
}

// missingError reports control plane binaries that have not been built.
type missingError struct {
	dir     string
	missing []string
}

func (e *missingError) Error() string {
	return fmt.Sprintf("testcluster: control plane binaries missing in %s: %s; "+
		"run `make control-plane` (testkit/testcluster/build.sh) to build them",
		e.dir, strings.Join(e.missing, ", "))
}

// Start starts a control plane for this test and stops it in t.Cleanup. A missing
// binary fails the test (t.Fatalf), it is never skipped.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	c, err := startIn(Dir(), opts)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	t.Logf("testcluster: control plane %s up in %s (%s)", Version, c.StartDuration().Round(time.Millisecond), c.Config.Host)
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("testcluster: stopping the control plane: %v", err)
		}
	})
	return c
}

var shared struct {
	sync.Mutex
	main     bool
	clusters map[string]*sharedCluster
}

type sharedCluster struct {
	c   *Cluster
	err error
}

// Main runs the package's tests and then stops the clusters made by Shared. Use it
// as the package's TestMain:
//
//	func TestMain(m *testing.M) { testcluster.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with work of its own around the tests: it runs them, stops the
// shared clusters, and returns the exit code (failing when a cluster did not stop).
func Run(m *testing.M) int {
	SharedAllowed()
	code := m.Run()
	if err := StopShared(); err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// StopShared stops every cluster made by Shared. Main calls it; call it yourself
// at the end of a TestMain of your own (after m.Run) if you do not use Main, and
// mark that with SharedAllowed.
func StopShared() error {
	shared.Lock()
	defer shared.Unlock()
	var errs []error
	for k, s := range shared.clusters {
		if s.c != nil {
			if err := s.c.Stop(); err != nil {
				errs = append(errs, err)
			}
		}
		delete(shared.clusters, k)
	}
	return errors.Join(errs...)
}

// SharedAllowed declares that the caller's TestMain calls StopShared after m.Run,
// for packages that cannot use Main.
func SharedAllowed() {
	shared.Lock()
	shared.main = true
	shared.Unlock()
}

// Shared returns the package's control plane for these Options, starting it on
// first use. It is stopped when the tests end, which needs Main (or SharedAllowed
// with StopShared) in the package's TestMain; without it the test fails. A start
// failure fails every test that asks for the cluster.
func Shared(t testing.TB, opts Options) *Cluster {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		t.Fatalf("testcluster.Shared needs the package's TestMain to stop the cluster: " +
			"add `func TestMain(m *testing.M) { testcluster.Main(m) }`, or use testcluster.Start")
		return nil
	}
	if shared.clusters == nil {
		shared.clusters = map[string]*sharedCluster{}
	}
	k := opts.key()
	s, ok := shared.clusters[k]
	if !ok {
		c, err := startIn(Dir(), opts)
		if c != nil {
			c.shared = true
		}
		s = &sharedCluster{c: c, err: err}
		shared.clusters[k] = s
		if err == nil {
			t.Logf("testcluster: shared control plane %s up in %s (%s)", Version, c.StartDuration().Round(time.Millisecond), c.Config.Host)
		}
	}
	if s.err != nil {
		t.Fatalf("%v", s.err)
		return nil
	}
	return s.c
}

func checkBinaries(dir string, names ...string) error {
	var missing []string
	for _, n := range names {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 || st.Size() == 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return &missingError{dir: dir, missing: missing}
	}
	return nil
}

// checkCRDPaths fails early, before anything starts, on a CRD path that does not exist
// or a directory without a file envtest would read (.yaml, .yml, .json).
func checkCRDPaths(paths []string) error {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("testcluster: CRD path: %w", err)
		}
		if !st.IsDir() {
			continue
		}
		var found bool
		for _, ext := range []string{"*.yaml", "*.yml", "*.json"} {
			m, _ := filepath.Glob(filepath.Join(p, ext))
			found = found || len(m) > 0
		}
		if !found {
			return fmt.Errorf("testcluster: no CustomResourceDefinition file (.yaml, .yml, .json) in %s", p)
		}
	}
	return nil
}
