// Package testcluster starts a real Kubernetes control plane for tests: etcd and
// kube-apiserver through controller-runtime's envtest and, on request,
// kube-controller-manager (EndpointSlice, Endpoints and garbage-collector
// controllers) as a subprocess against the same API server.
//
// The binaries are built from Go modules by internal/testcluster/build.sh
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
// If the test process dies without running its cleanups (go test -timeout, a
// signal), a small watchdog kills etcd, kube-apiserver and kube-controller-manager
// so they do not outlive it.
package testcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
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

// Dir is the directory holding the control plane binaries (kube-apiserver,
// kube-controller-manager, etcd): ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/control-plane/<Version>.
func Dir() string {
	base := os.Getenv("SPARKUI_CACHE")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".cache", "sparkui")
	}
	return filepath.Join(base, "control-plane", Version)
}

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
	started    time.Time
	startedFor time.Duration
	kcm        *exec.Cmd
	kcmDone    chan struct{}
	watchdog   *exec.Cmd
	wdPipe     io.WriteCloser

	stopOnce sync.Once
	stopErr  error
}

// missingError reports control plane binaries that have not been built.
type missingError struct {
	dir     string
	missing []string
}

func (e *missingError) Error() string {
	return fmt.Sprintf("testcluster: control plane binaries missing in %s: %s; "+
		"run `make control-plane` (internal/testcluster/build.sh) to build them",
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

// startIn starts a control plane from the binaries in binDir.
func startIn(binDir string, opts Options) (_ *Cluster, retErr error) {
	need := []string{"etcd", "kube-apiserver"}
	if opts.ControllerManager {
		need = append(need, "kube-controller-manager")
	}
	if err := checkCRDPaths(opts.CRDDirectoryPaths); err != nil {
		return nil, err
	}
	if err := checkBinaries(binDir, need...); err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "sparkui-testcluster-")
	if err != nil {
		return nil, fmt.Errorf("testcluster: %w", err)
	}
	c := &Cluster{dir: dir, started: time.Now()}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
		}
	}()
	if err := c.startWatchdog(); err != nil {
		return nil, err
	}
	// etcd's data and kube-apiserver's certificates live in the cluster's
	// directory, which the watchdog knows them by.
	etcdDir, certDir := filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	for _, d := range []string{etcdDir, certDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("testcluster: %w", err)
		}
	}

	apiLog, err := os.Create(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		return nil, fmt.Errorf("testcluster: %w", err)
	}
	defer apiLog.Close() // the child has its own descriptor
	etcdLog, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, fmt.Errorf("testcluster: %w", err)
	}
	defer etcdLog.Close()

	apiServer := &envtest.APIServer{
		// Explicit paths: KUBEBUILDER_ASSETS / TEST_ASSET_* must not swap the binaries.
		Path:    filepath.Join(binDir, "kube-apiserver"),
		CertDir: certDir,
		Out:     apiLog,
		Err:     apiLog,
	}
	for name, values := range opts.APIServerArgs {
		apiServer.Configure().Set(name, values...)
	}
	etcd := &envtest.Etcd{
		Path:    filepath.Join(binDir, "etcd"),
		DataDir: etcdDir,
		Out:     etcdLog,
		Err:     etcdLog,
	}

	c.Env = &envtest.Environment{
		BinaryAssetsDirectory:    binDir,
		UseExistingCluster:       ptr.To(false), // whatever USE_EXISTING_CLUSTER says
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
		ControlPlane: envtest.ControlPlane{
			APIServer:   apiServer,
			Etcd:        etcd,
			KubectlPath: filepath.Join(binDir, "kubectl"),
		},
	}
	if len(opts.CRDDirectoryPaths) > 0 {
		c.Env.CRDDirectoryPaths = opts.CRDDirectoryPaths
		c.Env.ErrorIfCRDPathMissing = true
		c.Env.CRDInstallOptions.MaxTime = crdTimeout
	}
	cfg, err := c.Env.Start()
	if err == nil && len(opts.CRDDirectoryPaths) > 0 && len(c.Env.CRDs) == 0 {
		return nil, fmt.Errorf("testcluster: no CustomResourceDefinition found in %s", strings.Join(opts.CRDDirectoryPaths, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("testcluster: starting etcd and kube-apiserver from %s: %w\n%s%s",
			binDir, err, logTail("kube-apiserver", apiLog.Name()), logTail("etcd", etcdLog.Name()))
	}
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("testcluster: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("testcluster: %w", err)
	}
	c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))

	if opts.ControllerManager {
		if err := c.startControllerManager(binDir, opts.controllers()); err != nil {
			return nil, err
		}
	}
	c.startedFor = time.Since(c.started)
	return c, nil
}

// StartDuration is how long the cluster took to start.
func (c *Cluster) StartDuration() time.Duration { return c.startedFor }

// LogDir holds the components' logs (kube-apiserver.log, etcd.log,
// kube-controller-manager.log) while the cluster runs; it is removed by Stop.
func (c *Cluster) LogDir() string { return c.dir }

// Stop stops kube-controller-manager, kube-apiserver and etcd. It is safe to call
// more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		// The watchdog goes first: it would kill what we are about to stop gracefully.
		if c.watchdog != nil && c.watchdog.Process != nil {
			_ = c.watchdog.Process.Kill()
			_ = c.watchdog.Wait()
			_ = c.wdPipe.Close()
		}
		if c.kcm != nil && c.kcm.Process != nil {
			_ = c.kcm.Process.Signal(os.Interrupt)
			select {
			case <-c.kcmDone:
			case <-time.After(10 * time.Second):
				_ = c.kcm.Process.Kill()
				<-c.kcmDone
			}
		}
		if c.Env != nil {
			if err := c.Env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
			}
		}
		if c.dir != "" {
			if err := os.RemoveAll(c.dir); err != nil {
				errs = append(errs, err)
			}
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// KubeconfigFile writes a kubeconfig for cfg (for instance from UserConfig) into
// a temporary directory of t and returns its path, for binaries run as
// subprocesses ($KUBECONFIG).
func (c *Cluster) KubeconfigFile(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	data, err := kubeconfigFor(cfg)
	if err != nil {
		t.Fatalf("testcluster: kubeconfig: %v", err)
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	return p
}

func kubeconfigFor(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testcluster"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: "user"}
	kc.CurrentContext = "testcluster"
	return clientcmd.Write(*kc)
}

// UserConfig returns a configuration authenticating as user with groups (client
// certificate), subject to RBAC. For a ServiceAccount pass
// "system:serviceaccount:<ns>:<name>" and its groups, or use ServiceAccountConfig.
func (c *Cluster) UserConfig(t testing.TB, user string, groups ...string) *rest.Config {
	t.Helper()
	// envtest's certificate authority is not safe for concurrent use (seen with -race).
	c.addUserMu.Lock()
	u, err := c.Env.AddUser(envtest.User{Name: user, Groups: groups}, &rest.Config{QPS: 1000, Burst: 2000})
	c.addUserMu.Unlock()
	if err != nil {
		t.Fatalf("testcluster: adding user %q: %v", user, err)
	}
	return u.Config()
}

// ServiceAccountConfig returns a configuration with the identity the API server
// gives ServiceAccount ns/name: user system:serviceaccount:<ns>:<name>, groups
// system:serviceaccounts, system:serviceaccounts:<ns>, system:authenticated.
func (c *Cluster) ServiceAccountConfig(t testing.TB, ns, name string) *rest.Config {
	t.Helper()
	return c.UserConfig(t, "system:serviceaccount:"+ns+":"+name,
		"system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated")
}

// EnsureNamespace creates namespace name unless it exists.
func (c *Cluster) EnsureNamespace(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ensureNamespace(ctx, name); err != nil {
		t.Fatalf("testcluster: namespace %q: %v", name, err)
	}
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// UniqueNamespace creates a namespace named after the test, with a random suffix,
// and returns its name. There is no namespace controller, so it is not deleted
// afterwards; it goes away with the cluster.
func (c *Cluster) UniqueNamespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = strings.Trim(base[:50], "-")
	}
	if base == "" {
		base = "test"
	}
	name := base + "-" + rand.String(6)
	c.EnsureNamespace(t, name)
	return name
}

func (c *Cluster) ensureNamespace(ctx context.Context, name string) error {
	_, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err = c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Mapping resolves the object's kind to its resource through discovery,
// refreshing discovery once when the kind is unknown (a CRD installed since).
func (c *Cluster) Mapping(obj *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("testcluster: object has no apiVersion/kind: %q/%q", obj.GetAPIVersion(), obj.GetKind())
	}
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("testcluster: resolving %s: %w", gvk, err)
	}
	return m, nil
}

// DryRunCreate submits obj as a server-side dry-run create (dryRun=All,
// fieldValidation=Strict): the API server decodes, defaults, validates and admits
// it as it would a real create, and persists nothing. A namespaced object without
// a namespace goes to "default"; its namespace is created first when missing (the
// NamespaceLifecycle admission plugin rejects objects in a namespace that does
// not exist). The error is the API server's (apierrors.IsInvalid for 422 and so on).
func (c *Cluster) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured) error {
	m, err := c.Mapping(obj)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		if err := c.ensureNamespace(ctx, ns); err != nil {
			return fmt.Errorf("testcluster: namespace %q: %w", ns, err)
		}
		ri = c.Dynamic.Resource(m.Resource).Namespace(ns)
	} else {
		ri = c.Dynamic.Resource(m.Resource)
	}
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{
		DryRun:          []string{metav1.DryRunAll},
		FieldValidation: metav1.FieldValidationStrict,
	})
	return err
}

// DryRunCreateYAML decodes one YAML (or JSON) document and passes it to DryRunCreate.
func (c *Cluster) DryRunCreateYAML(ctx context.Context, doc []byte) error {
	obj, err := DecodeYAML(doc)
	if err != nil {
		return err
	}
	return c.DryRunCreate(ctx, obj)
}

// DecodeYAML decodes one YAML (or JSON) document into an unstructured object.
// Duplicate keys are an error, as they are for the API server.
func DecodeYAML(doc []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("testcluster: decoding YAML: %w", err)
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, errors.New("testcluster: empty YAML document")
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("testcluster: decoding object: %w", err)
	}
	return obj, nil
}

// startControllerManager runs kube-controller-manager against the API server with
// admin credentials and waits for its /healthz.
func (c *Cluster) startControllerManager(binDir string, controllers []string) error {
	kubeconfig := filepath.Join(c.dir, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, c.Env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	certDir := filepath.Join(c.dir, "kube-controller-manager-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	logPath := filepath.Join(c.dir, "kube-controller-manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	defer logFile.Close()

	cmd := exec.Command(filepath.Join(binDir, "kube-controller-manager"),
		"--kubeconfig="+kubeconfig,
		// Delegated authn/authz of its own /healthz and /metrics endpoints.
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+certDir,
		"--v=2",
	)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testcluster: starting kube-controller-manager: %w", err)
	}
	c.kcm = cmd
	c.kcmDone = make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.kcmDone) }()

	hc := &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, loopback
		},
	}
	defer hc.CloseIdleConnections()
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-c.kcmDone:
			return fmt.Errorf("testcluster: kube-controller-manager exited: %v\n%s", cmd.ProcessState, logTail("kube-controller-manager", logPath))
		default:
		}
		resp, err := hc.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testcluster: kube-controller-manager not healthy after %s\n%s", startTimeout, logTail("kube-controller-manager", logPath))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail returns the last lines of a component's log, for error messages.
func logTail(name, path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return ""
	}
	const max = 4000
	if len(data) > max {
		data = data[len(data)-max:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return fmt.Sprintf("--- last lines of %s ---\n%s\n", name, data)
}

// watchdogScript waits for EOF on stdin, then kills every process whose command
// line mentions the cluster's directory ($1: etcd's data dir, kube-apiserver's
// cert dir and kube-controller-manager's kubeconfig all live there) and removes
// the directory. It ignores ^C and hangups, which reach it with the test binary.
const watchdogScript = `trap '' HUP INT TERM
dir=$1
while read -r _ignored; do :; done
for f in $(grep -laF -- "$dir" /proc/[0-9]*/cmdline 2>/dev/null); do
	pid=${f#/proc/}
	pid=${pid%/cmdline}
	[ "$pid" = "$$" ] || kill -9 "$pid" 2>/dev/null
done
rm -rf -- "$dir"
`

// startWatchdog starts a shell reading a pipe whose write end only this process
// holds. When the test binary dies without stopping the cluster (go test
// -timeout panics, a signal, os.Exit before the cleanups), the pipe reaches EOF
// and the watchdog kills etcd, kube-apiserver and kube-controller-manager, which
// would otherwise live on as orphans, and removes their files. Stop kills the
// watchdog first. It is started before the components, so a test binary that
// dies during the start leaves nothing behind either.
func (c *Cluster) startWatchdog() error {
	if runtime.GOOS != "linux" {
		return nil // needs /proc; elsewhere the cluster relies on Stop alone
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "sparkui-testcluster-watchdog", c.dir)
	w, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("testcluster: watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return fmt.Errorf("testcluster: watchdog: %w", err)
	}
	c.watchdog, c.wdPipe = cmd, w
	return nil
}
