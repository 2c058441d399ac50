package nodetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestKubectlPluginOnNode: the built `kubectl-sparkui` against the function's spark-submit
// output running on a real node, once bound: `list` exactly (ages normalised) and `why`'s
// lines, and the real kubectl's `describe pod` beside them in the log. `open` is not run here:
// this node's kubelet is not reachable from the API server (it listens in the node's own
// network namespace), so no port-forward can pass.
func TestKubectlPluginOnNode(t *testing.T) {
	n := startNode(t, "docker.io/apache/spark:3.5.3")
	c := n.Cluster
	objs := render(t, "spark-submit")
	var ns, podName, svcName string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Pod":
			ns, podName = o.GetNamespace(), o.GetName()
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			svcName = o.GetName()
		}
	}
	create(t, n, objs)
	uiPort := logLine(t, n, ns, podName, "spark-kubernetes-driver", regexp.MustCompile(`listening (\d+) app`), 2*time.Minute)[1]
	ctx := testcluster.Context(t, 3*time.Minute)
	testcluster.WaitFor(t, 90*time.Second, "bound", func() (bool, string) {
		svc, err := c.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(svc.Spec.Selector) > 0 && svc.Spec.Ports[0].TargetPort.String() == uiPort, svc.Spec.String()
	})

	bin := filepath.Join(t.TempDir(), "kubectl-sparkui")
	if err := os.WriteFile(bin, mustBuild(t, "./kubectlplugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	kc := c.KubeconfigFile(t, c.Config)
	plugin := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, append(args, "--kubeconfig", kc)...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl sparkui %v: %v\n%s%s", args, err, out.String(), errOut.String())
		}
		t.Logf("$ kubectl sparkui %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
		return out.String()
	}
	ages := regexp.MustCompile(`\b\d+(s|m|h|m\d+s)\b`)
	prefix := strings.TrimSuffix(svcName, "-ui-svc")
	got := ages.ReplaceAllString(plugin("list", "-n", ns), "AGE")
	want := regexp.MustCompile(` +`).ReplaceAllString(strings.Join([]string{
		"NAME CARRIER STATE PORT LINK AGE",
		prefix + " Pod/" + podName + " bound " + uiPort + " - AGE", ""}, "\n"), " ")
	if g := regexp.MustCompile(` +`).ReplaceAllString(got, " "); g != want {
		t.Errorf("list:\n%s\nwant (spaces squeezed):\n%s", got, want)
	}
	why := ages.ReplaceAllString(plugin("why", prefix, "-n", ns), "AGE")
	for _, line := range []string{
		"Application:     " + prefix + " (namespace " + ns + ")",
		"Carrier:         Pod/" + podName,
		"State:           bound to port " + uiPort + ", from the Service's spec",
		"Driver Pod:      " + podName + " (Running, AGE ago; bound by (ownerReference))",
		"Sidecar:         sparkui-runtime running, restarts 0",
		"Termination msg: none",
		"Events: none reported by sparkui-runtime regarding Pod " + podName,
		// The example runs under hostNetwork and declares Spark's RPC and block-manager
		// ports: the same warning sparkui-fn gives on the manifests.
		"Checks that fail (sparkui's rules on the live objects):",
		`  warning [SUI011] hostNetwork: true and container "spark-kubernetes-driver" declares ports: they become hostPorts, and drivers declaring the same port cannot share a node`,
	} {
		if !strings.Contains(why, line+"\n") {
			t.Errorf("why lacks the line %q:\n%s", line, why)
		}
	}
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(kubectl, "--kubeconfig", kc, "describe", "pod", podName, "-n", ns).CombinedOutput()
		t.Logf("$ kubectl describe pod %s -n %s (%v)\n%s", podName, ns, err, out)
	}
}
