package testcluster

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Starting and stopping the components, and the watchdog that stops them if the test
// process dies.

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
	if len(opts.ServingIPs) > 0 {
		ca, caCert, caKey, err := writeServingCerts(certDir, opts.ServingIPs)
		if err != nil {
			return nil, fmt.Errorf("testcluster: %w", err)
		}
		apiServer.SecureServing.CA = ca
		if opts.NodeEgress {
			args, sock, err := writeNodeEgress(certDir, caCert, caKey)
			if err != nil {
				return nil, fmt.Errorf("testcluster: %w", err)
			}
			c.egressSock = sock
			for name, values := range args {
				apiServer.Configure().Set(name, values...)
			}
		}
	} else if opts.NodeEgress {
		return nil, fmt.Errorf("testcluster: Options.NodeEgress needs ServingIPs (the cluster's own CA signs the kubelet client certificate)")
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

func (c *Cluster) startControllerManager(binDir string, controllers []string) error {
	kubeconfig := filepath.Join(c.dir, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, c.Env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	certDir := filepath.Join(c.dir, "kube-controller-manager-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	// The CA that signed the API server's certificate, which the root-ca-cert-publisher
	// controller publishes as every namespace's kube-root-ca.crt ConfigMap (what a Pod's
	// service-account volume projects as ca.crt).
	rootCA := filepath.Join(c.dir, "ca.crt")
	if err := os.WriteFile(rootCA, c.Env.ControlPlane.APIServer.SecureServing.CA, 0o600); err != nil {
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
		"--root-ca-file="+rootCA,
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

// FreePort is a TCP port free on 127.0.0.1 just now, for a component the tests start.
func FreePort() (int, error) {
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
