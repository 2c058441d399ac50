package blackbox

// podnet_test.go: running the built runtime the way the kubelet runs the sparkui-runtime
// container of a driver Pod: its args with $(VAR) expanded from its env, its env resolved from
// the Pod (downward API), and — unless the Pod uses hostNetwork — in a network namespace of its
// own, like a Pod's, holding only the stand-in Spark UI on the port Spark would bind there.
//
// The Pod network is an unprivileged user+network namespace (`unshare -rn`) whose only
// interface is lo. The test binary itself runs in it as the "Pod" (podNetMain): it brings lo
// up, starts the stand-in UI, forwards the API server's address on lo to a unix socket that
// the test process relays to the real API server (the filesystem is shared, the network is
// not), and runs the runtime as its child. A runtime in the Pod network sees exactly one
// listening UI, as in a real Pod, so two runs of one carrier never see each other's UI.

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/podnet"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Environment of the test binary run as the Pod network's "Pod" (podNetMain).
const (
	podNetEnv       = "BLACKBOX_PODNET"         // set: run podNetMain instead of the tests
	podNetUIAddr    = "BLACKBOX_PODNET_UI_ADDR" // where the stand-in UI listens
	podNetAppID     = "BLACKBOX_PODNET_APP_ID"
	podNetPodName   = "BLACKBOX_PODNET_POD_NAME" // spark.kubernetes.driver.pod.name, "" = unset
	podNetNamespace = "BLACKBOX_PODNET_NAMESPACE"
	podNetAPIAddr   = "BLACKBOX_PODNET_API_ADDR"   // the API server's host:port, served on lo
	podNetAPISock   = "BLACKBOX_PODNET_API_SOCK"   // the unix socket relayed to the API server
	podNetJWSToken  = "BLACKBOX_PODNET_JWS_TOKEN"  // set: the UI is behind Spark's JWSFilter accepting it
	podNetProxyBase = "BLACKBOX_PODNET_PROXY_BASE" // spark.ui.proxyBase of the stand-in UI
)

// podNetMain is the test binary inside `unshare -rn`: args are the runtime's command line.
// The network's plumbing is testkit/podnet's, shared with testkit/scale.
func podNetMain(args []string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "podnet:", err); return 1 }
	if err := podnet.ServeAPI(os.Getenv(podNetAPIAddr), os.Getenv(podNetAPISock)); err != nil {
		return fail(err)
	}
	opts := fakespark.Options{Addr: os.Getenv(podNetUIAddr), AppID: os.Getenv(podNetAppID),
		PodName: os.Getenv(podNetPodName), Namespace: os.Getenv(podNetNamespace), State: fakespark.Ready,
		ProxyBase: os.Getenv(podNetProxyBase)}
	if tok := os.Getenv(podNetJWSToken); tok != "" {
		opts.Filter, opts.Token = fakespark.JWS, tok
	}
	ui, err := fakespark.Start(opts)
	if err != nil {
		return fail(err)
	}
	defer ui.Close()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BLACKBOX_PODNET") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // the Pod dies with the test's kill
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	go func() {
		for s := range sigs { // the kubelet's SIGTERM goes to the container
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode()
}

// checkUnshare fails the test, never skips it, where a Pod network cannot be made
// (podnet.CheckUnshare says what is missing).
func checkUnshare(t *testing.T) {
	t.Helper()
	if err := podnet.CheckUnshare(); err != nil {
		t.Fatal(err)
	}
}

// apiRelay is the unix socket, shared by every Pod network of the package, that the test
// process relays to c's API server; it returns the socket and the API server's host:port.
func apiRelay(t *testing.T, c *testcluster.Cluster) (sock, hostport string) {
	t.Helper()
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	if sock, err = podnet.APIRelay(u.Host); err != nil {
		t.Fatal(err)
	}
	return sock, u.Host
}

// sidecarOf is the Pod's sparkui-runtime container (a native sidecar: an init container).
func sidecarOf(t *testing.T, pod *corev1.Pod) corev1.Container {
	t.Helper()
	for _, c := range pod.Spec.InitContainers {
		if c.Name == sidecar.ContainerName {
			return c
		}
	}
	t.Fatalf("driver Pod %s has no %s init container", pod.Name, sidecar.ContainerName)
	return corev1.Container{}
}

// containerEnv resolves the container's env as the kubelet does (podnet.ContainerEnv).
func containerEnv(t *testing.T, pod *corev1.Pod, c corev1.Container) []string {
	t.Helper()
	env, err := podnet.ContainerEnv(pod, c)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// expandArgs expands $(VAR) in args from env as the kubelet does (podnet.ExpandArgs).
func expandArgs(args, env []string) []string { return podnet.ExpandArgs(args, env) }

// uiOptions describe the stand-in UI of one run: the application it lists, and, when
// JWSToken is set, Spark's JWSFilter in front of it accepting that bearer token only.
type uiOptions struct {
	AppID, PodName string
	JWSToken       string
	ProxyBase      string // spark.ui.proxyBase (a route with a path prefix); "" = none
	// Server, under hostNetwork only, is a stand-in UI the test already runs (e.g. on every
	// address, for a proxy to reach it at the Pod's IP); the other fields are then unused.
	Server *fakespark.Server
}

// kubeletVolumes does the kubelet's part for the volumes ctr mounts that the runtime reads:
// each Secret volume is projected from the Secret (its items, or every key) into a local
// directory standing for its mount path. It returns mount path → directory. A mount whose
// volume the Pod lacks fails the test (the API server refuses such a Pod before this).
func kubeletVolumes(t *testing.T, c *testcluster.Cluster, pod *corev1.Pod, ctr corev1.Container) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == m.Name {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil {
			t.Fatalf("%s: container %s mounts volume %s, which the Pod does not have", pod.Name, ctr.Name, m.Name)
		}
		if vol.Secret == nil {
			continue
		}
		dir := t.TempDir()
		projectSecret(t, c, pod.Namespace, *vol.Secret, dir)
		dirs[strings.TrimSuffix(m.MountPath, "/")] = dir
	}
	return dirs
}

// projectSecret writes the Secret's keys into dir as the kubelet's secret volume does: the
// items' paths when the volume lists items, else one file per key. Each file is replaced by
// a rename, as the kubelet's atomic writer swaps a whole projection on a Secret's update.
func projectSecret(t *testing.T, c *testcluster.Cluster, ns string, src corev1.SecretVolumeSource, dir string) {
	t.Helper()
	sec, err := c.Client.CoreV1().Secrets(ns).Get(testcluster.Context(t, 10*time.Second), src.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("secret volume %s: %v", src.SecretName, err)
	}
	files := map[string][]byte{}
	if len(src.Items) == 0 {
		for k, v := range sec.Data {
			files[k] = v
		}
	}
	for _, it := range src.Items {
		v, ok := sec.Data[it.Key]
		if !ok {
			t.Fatalf("secret %s has no key %s", src.SecretName, it.Key)
		}
		files[it.Path] = v
	}
	for name, v := range files {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, v, 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// startPodRuntime runs the built runtime as the kubelet runs pod's sparkui-runtime container:
// its args expanded from its env, the env resolved from pod, as pod's ServiceAccount. Only the
// paths under its emptyDir and its termination log move to a temporary directory. Under
// hostNetwork it runs in the test's network next to a stand-in UI on a random port; otherwise
// in a Pod network with the UI on Spark's first port there, --ui-port. It returns the process, the
// control socket (for the preStop hook) and the UI's port.
func startPodRuntime(t *testing.T, c *testcluster.Cluster, pod *corev1.Pod, ui uiOptions) (*runtimeProc, string, int) {
	t.Helper()
	ctr := sidecarOf(t, pod)
	env := containerEnv(t, pod, ctr)
	args := expandArgs(ctr.Args, env)
	t.Logf("%s: runtime args as the kubelet expands them: %v", pod.Name, args)
	uiPort := 0 // in a Pod network Spark binds spark.ui.port, the runtime's --ui-port
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--ui-port="); ok {
			uiPort, _ = strconv.Atoi(v)
		}
	}
	if uiPort == 0 && !pod.Spec.HostNetwork {
		t.Fatalf("%s: a random UI port in a Pod network is not modelled here: %v", pod.Name, args)
	}

	shared, err := os.MkdirTemp("", "sui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shared) })
	// Paths under a mounted Secret volume point at its projection here.
	for mp, dir := range kubeletVolumes(t, c, pod, ctr) {
		for i, a := range args {
			if flag, file, ok := strings.Cut(a, "="); ok && strings.HasPrefix(file, mp+"/") {
				args[i] = flag + "=" + dir + strings.TrimPrefix(file, mp)
			}
		}
	}
	sock := filepath.Join(shared, "runtime.sock")
	args = append(args, "--socket="+sock, "--install="+filepath.Join(shared, "sparkui-runtime"),
		"--state-file="+filepath.Join(shared, "bound-port"), "--termination-log="+filepath.Join(shared, "termination-log"))
	env = append(env, "PATH="+os.Getenv("PATH"),
		"KUBECONFIG="+c.KubeconfigFile(t, c.ServiceAccountConfig(t, pod.Namespace, pod.Spec.ServiceAccountName)))

	p := &runtimeProc{done: make(chan struct{})}
	if pod.Spec.HostNetwork && ui.Server != nil {
		uiPort = ui.Server.Port
		p.cmd = exec.Command(runtimeBin, args...)
		p.cmd.Env = env
	} else if pod.Spec.HostNetwork {
		opts := fakespark.Options{AppID: ui.AppID, PodName: ui.PodName, Namespace: pod.Namespace, State: fakespark.Ready, ProxyBase: ui.ProxyBase}
		if ui.JWSToken != "" {
			opts.Filter, opts.Token = fakespark.JWS, ui.JWSToken
		}
		s, err := fakespark.Start(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		uiPort = s.Port
		p.cmd = exec.Command(runtimeBin, args...)
		p.cmd.Env = env
	} else {
		checkUnshare(t)
		apiSock, apiAddr := apiRelay(t, c)
		p.cmd = exec.Command("unshare", append([]string{"-rn", os.Args[0], runtimeBin}, args...)...)
		p.cmd.Env = append(env, podNetEnv+"=1", podNetUIAddr+"="+fmt.Sprintf("127.0.0.1:%d", uiPort),
			podNetAppID+"="+ui.AppID, podNetPodName+"="+ui.PodName, podNetNamespace+"="+pod.Namespace,
			podNetAPIAddr+"="+apiAddr, podNetAPISock+"="+apiSock, podNetJWSToken+"="+ui.JWSToken, podNetProxyBase+"="+ui.ProxyBase)
	}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p, sock, uiPort
}
