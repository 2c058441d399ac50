package scale

// The History redirector at scale (issue 33 item 3; docs/performance.md "The History
// redirector at 10,000 Services"): the built `sparkui-runtime redirect` as a process of its
// own, under the example's ServiceAccount and Role (examples/history-redirector/redirector.yaml,
// its Deployment's environment included), following a namespace of N handed-off UI Services
// while applications end and old Services are deleted.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// historyURL is the redirector's own History Server URL (the example Deployment's).
const historyURL = "https://spark-history.example.com"

// The names of application i of a History run.
func histService(i int) string { return fmt.Sprintf("app%05d-ui-svc", i) }
func histAppID(i int) string   { return fmt.Sprintf("spark-%032x", i) }
func histPodUID(i int) string  { return fmt.Sprintf("0f6c2a8e-1b7d-4c1e-9a57-%012x", i) }

// histWantLocation is where the redirector must send a request for application i.
func histWantLocation(i int) string { return historyURL + "/history/" + histAppID(i) + "/" }

// histServiceObj is application i's UI Service as the function renders it with a route
// (labels app.kubernetes.io/managed-by=sparkui and spark-app-selector; route-host and
// route-prefix annotations as testdata/route-httproute/expected.yaml has them), in one of two
// states. Handed off: what the runtime's hand-off leaves (binder.Target.HandoffPatchWith): the
// selector exactly sparkui.dev/history-redirector=true, the UI port's targetPort the
// redirector's, the history-uri annotation and the handed-off status annotations. Bound: what a
// bind without an owner leaves (binder.Target.BindPatchWith with NoOwner): the driver's
// selector and the sparkui.dev/bound-pod label, which the hand-off's guard tests. No
// ownerReference: the garbage collector would delete a Service owned by a Pod that does not
// exist.
func histServiceObj(ns string, i int, handedOff bool, redirectorPort int) *corev1.Service {
	app := fmt.Sprintf("app%05d", i)
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: histService(i), Namespace: ns,
			Labels: map[string]string{names.LabelManagedBy: names.ManagedByValue, names.LabelAppSelector: histAppID(i)},
			Annotations: map[string]string{
				names.AnnotationRouteHost:   "spark.example.com",
				names.AnnotationRoutePrefix: "/spark/" + ns + "/" + app,
			}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: "spark-ui", Protocol: corev1.ProtocolTCP, Port: 4040, TargetPort: intstr.FromInt32(4040)}}},
	}
	since := time.Now().UTC().Format(time.RFC3339)
	if handedOff {
		s.Spec.Selector = names.RedirectorSelector()
		s.Spec.Ports[0].TargetPort = intstr.FromInt(redirectorPort)
		s.Annotations[names.AnnotationHistoryURI] = "https://shs.example.com/history/" + histAppID(i) + "/"
		s.Annotations[names.AnnotationUIState] = names.UIStateHandedOff
		s.Annotations[names.AnnotationUISince] = since
		s.Annotations[names.AnnotationUIPod] = app + "-driver"
		return s
	}
	s.Labels[sidecar.LabelBoundPod] = histPodUID(i)
	s.Spec.Selector = map[string]string{names.LabelAppSelector: histAppID(i), names.LabelSparkRole: names.RoleDriver}
	s.Annotations[names.AnnotationUIState] = names.UIStateBound
	s.Annotations[names.AnnotationUISince] = since
	s.Annotations[names.AnnotationUIPod] = app + "-driver"
	s.Annotations[names.AnnotationUIPort] = "4040"
	return s
}

// histClient is an admin clientset that client-go does not throttle (its default, 5 requests
// a second, would make creating 10,000 Services take half an hour).
func histClient(t testing.TB, c *testcluster.Cluster) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createServices creates application first..first+n-1's UI Services, parallel at a time.
func createServices(ctx context.Context, cs kubernetes.Interface, ns string, first, n, parallel int, handedOff bool, redirectorPort int) error {
	idx := make(chan int)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				err := createService(ctx, cs, histServiceObj(ns, i, handedOff, redirectorPort))
				if err != nil {
					select {
					case errs <- fmt.Errorf("create Service %s/%s: %w", ns, histService(i), err):
					default:
					}
				}
			}
		}()
	}
	for i := first; i < first+n; i++ {
		select {
		case idx <- i:
		case err := <-errs:
			close(idx)
			wg.Wait()
			return err
		}
	}
	close(idx)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// createService creates svc, again when the API server did not answer in time or refused for
// load (a loaded 2-core machine: one of 10,000 creates timed out after the API server's 60 s);
// a retried create that finds the Service created by the first attempt has succeeded.
func createService(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) error {
	var err error
	for attempt := range 5 {
		_, err = cs.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
		switch {
		case err == nil, attempt > 0 && apierrors.IsAlreadyExists(err):
			return nil
		case apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err):
			time.Sleep(time.Duration(1+attempt) * time.Second)
		default:
			return err
		}
	}
	return err
}

// redirectorIdentity creates the example's ServiceAccount, Role and RoleBinding in ns and
// returns the configuration of that ServiceAccount and the literal environment of the
// example's Deployment (SPARKUI_HISTORY_URL, SPARKUI_MAX_CONNECTIONS, GOMEMLIMIT).
func redirectorIdentity(t testing.TB, c *testcluster.Cluster, ns string) (cfg *rest.Config, env []string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(moduleDir(t), "examples", "history-redirector", "redirector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testcluster.Context(t, 30*time.Second)
	var saName string
	for _, doc := range strings.Split(string(src), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ServiceAccount":
			var sa corev1.ServiceAccount
			unmarshalStrict(t, doc, &sa)
			saName = sa.Name
			_, err = c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &sa, metav1.CreateOptions{})
		case "Role":
			var r rbacv1.Role
			unmarshalStrict(t, doc, &r)
			_, err = c.Client.RbacV1().Roles(ns).Create(ctx, &r, metav1.CreateOptions{})
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			unmarshalStrict(t, doc, &rb)
			_, err = c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rb, metav1.CreateOptions{})
		case "Deployment": // the redirector's own, not a Spark carrier
			var d appsv1.Deployment
			unmarshalStrict(t, doc, &d)
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.ValueFrom == nil {
					env = append(env, e.Name+"="+e.Value)
				}
			}
		default:
			t.Fatalf("redirector.yaml: unexpected kind %q", meta.Kind)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if saName == "" {
		t.Fatal("redirector.yaml: no ServiceAccount")
	}
	return c.ServiceAccountConfig(t, ns, saName), env
}

func unmarshalStrict(t testing.TB, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatalf("redirector.yaml: %v", err)
	}
}

// redirector is one run of the built `sparkui-runtime redirect`.
type redirector struct {
	cmd          *exec.Cmd
	done         chan struct{}
	port, health int
	log          string // its output, in a file: it logs a line per handed-off Service
}

// startRedirector runs bin's redirect in ns as the example's Deployment runs it; env overrides
// the Deployment's environment (e.g. GOMEMLIMIT=).
func startRedirector(bin, ns, kubeconfig string, env []string, port, health int, logFile string) (*redirector, error) {
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(bin, "redirect", fmt.Sprintf("--redirector-port=%d", port), fmt.Sprintf("--health-port=%d", health))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + ns}, env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &redirector{cmd: cmd, done: make(chan struct{}), port: port, health: health, log: logFile}
	go func() { _ = cmd.Wait(); close(r.done) }()
	return r, nil
}

func (r *redirector) pid() int { return r.cmd.Process.Pid }

// stop sends SIGTERM and waits for the exit (SIGKILL after 15 s); it reports the exit code.
func (r *redirector) stop() int {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	return r.cmd.ProcessState.ExitCode()
}

// waitReady polls /readyz every 5 ms until it answers 200 and returns its body and how long
// since start it took.
func (r *redirector) waitReady(start time.Time, timeout time.Duration) (time.Duration, string, error) {
	c := noRedirect(1)
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", r.health)
	for deadline := start.Add(timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		select {
		case <-r.done:
			return 0, "", fmt.Errorf("the redirector exited (%s) before it was ready", r.cmd.ProcessState)
		default:
		}
		code, _, body, err := get(c, url, nil)
		if err == nil && code == 200 {
			return time.Since(start), strings.TrimSpace(body), nil
		}
	}
	return 0, "", fmt.Errorf("not ready after %s", timeout)
}
