package blackbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

var namespaceLine = regexp.MustCompile(`(?m)^(\s*namespace:\s*)[a-z0-9-]+\s*$`)

// renderCarrier renders testdata/<dir>/input.yaml with its namespaces replaced by ns, and
// returns the output and the carrier (the first item, as in every carrier-* input but the
// StatefulSet's, whose ConfigMap comes first: the first item of a carrier kind).
func renderCarrier(t *testing.T, dir, ns string, edit func(*testing.T, string) string, errorsAllowed bool) (rendered, *yaml.RNode) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", dir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := string(b)
	if edit != nil {
		in = edit(t, in)
	}
	r := renderListExit(t, namespaceLine.ReplaceAllString(in, "${1}"+ns), errorsAllowed)
	for _, it := range r.items {
		switch it.GetKind() {
		case "SparkApplication", "ScheduledSparkApplication", "SparkConnect", "Deployment", "StatefulSet", "Job", "CronJob":
			return r, it
		}
	}
	t.Fatalf("no carrier in the output of %s", dir)
	return r, nil
}

// applySparkui applies what the function adds next to the carrier (UI Service, Role,
// RoleBinding, ServiceAccount) as a pipeline does, and creates the RoleBinding's
// ServiceAccount when the input has none. The carrier itself is not applied: no operator
// runs here, and the workload controllers of kube-controller-manager would build Pods of
// their own next to the test's.
func applySparkui(t *testing.T, c *testcluster.Cluster, ns string, r rendered) (svc string) {
	t.Helper()
	var objs []*yaml.RNode
	var sas []string
	for _, it := range r.items {
		if it.GetNamespace() != ns {
			continue
		}
		switch it.GetKind() {
		case "Service":
			svc = it.GetName()
		case "RoleBinding":
			subj, err := it.Pipe(yaml.Lookup("subjects", "[kind=ServiceAccount]", "name"))
			if err != nil || subj == nil {
				t.Fatalf("RoleBinding %s has no ServiceAccount subject: %v", it.GetName(), err)
			}
			sas = append(sas, yaml.GetValue(subj))
		case "Role", "ServiceAccount":
		default:
			continue
		}
		objs = append(objs, it)
	}
	if svc == "" || len(sas) != 1 {
		t.Fatalf("the function emitted no UI Service or not one binder: %d objects", len(objs))
	}
	var buf strings.Builder
	if err := (kio.ByteWriter{Writer: &buf}).Write(objs); err != nil {
		t.Fatal(err)
	}
	kubectl(t, c.KubeconfigFile(t, c.Config), []byte(buf.String()), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	_, err := c.Client.CoreV1().ServiceAccounts(ns).Create(testcluster.Context(t, 10*time.Second),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sas[0], Namespace: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return svc
}

// preStop runs the driver container's preStop hook as the kubelet does: the emitted command,
// with the binary and socket at the test's paths.
func preStop(t *testing.T, d driverRun) {
	t.Helper()
	var hook []string
	for _, ctr := range d.pod.Spec.Containers {
		if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil && ctr.Lifecycle.PreStop.Exec != nil &&
			sidecar.IsWithdrawCommand(ctr.Lifecycle.PreStop.Exec.Command) {
			hook = append([]string{}, ctr.Lifecycle.PreStop.Exec.Command...)
		}
	}
	if hook == nil {
		t.Fatalf("%s: no container has the withdraw preStop hook", d.pod.Name)
	}
	hook[0] = runtimeBin
	for i, a := range hook {
		if strings.HasPrefix(a, "--socket=") {
			hook[i] = "--socket=" + d.sock
		}
	}
	if out, err := exec.Command(hook[0], hook[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: preStop hook: %v\n%s\nruntime:\n%s", d.pod.Name, err, out, d.proc.logs())
	}
}

// sigterm stops the runtime as the kubelet stops the container and returns its exit code.
func sigterm(t *testing.T, d driverRun) int {
	t.Helper()
	if err := d.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.proc.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: the runtime did not stop within 15 s of SIGTERM\n%s", d.pod.Name, d.proc.logs())
	}
	return d.proc.cmd.ProcessState.ExitCode()
}

func deletePod(t *testing.T, c *testcluster.Cluster, pod *corev1.Pod) {
	t.Helper()
	if err := c.Client.CoreV1().Pods(pod.Namespace).Delete(testcluster.Context(t, 10*time.Second), pod.Name,
		metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
}

func noOwner(t *testing.T, c *testcluster.Cluster, ns, svc string) {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 0 {
		t.Fatalf("the bound Service has owners %v: the garbage collector would delete it with the run's Pod", s.OwnerReferences)
	}
}

// serviceOutlives: with every driver Pod deleted, the garbage collector (kube-controller-manager
// runs) leaves the Service alone, for the next run.
func serviceOutlives(t *testing.T, c *testcluster.Cluster, ns, svc string) {
	t.Helper()
	time.Sleep(2 * time.Second)
	noOwner(t, c, ns, svc)
}
