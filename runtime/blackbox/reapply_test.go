package blackbox

// reapply_test.go: field ownership between a pipeline and the runtime (docs/gitops.md):
// the function's output is applied to a real kube-apiserver and kube-controller-manager, the
// built sparkui-runtime binds the UI Service as the driver's ServiceAccount under the Role the
// function emits, with the args of the sidecar the function emits, and the SAME output is then
// applied again the ways pipelines do (gitops_test.go): `kubectl apply` client-side (CI) and
// server-side, Argo CD's two sync paths (its engine, gitops-engine, as argocd_test.go drives it:
// the default client-side sync and ServerSideApply=true) and Flux's
// kustomize-controller (github.com/fluxcd/pkg/ssa, with and without spec.force). The bind,
// and after a withdrawal the withdrawal, must survive each of them: targetPort, selector and
// the EndpointSlice stay as the runtime set them, and no applier's drift detection reports
// the runtime's fields.

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

var appliers = []applier{
	kubectlApplier("client-side", "kubectl-client-side-apply"),
	kubectlApplier("server-side", "ssa-pipeline", "--server-side", "--field-manager=ssa-pipeline"),
	argocdApplier("argocd-client-side", false),
	argocdApplier("argocd-server-side", true),
	fluxApplier("flux", false),
	fluxApplier("flux-force", true),
}

func TestReapplyKeepsBindAndWithdrawal(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	for i, a := range appliers {
		t.Run(a.name, func(t *testing.T) {
			reapply(t, c, a, fmt.Sprintf("192.0.2.%d", 41+i))
		})
	}
}

func reapply(t *testing.T, c *testcluster.Cluster, a applier, ip string) {
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns

	stream, args := render(t, ns, appID)
	t.Logf("runtime args as the function emits them: %v", args)
	const svc = "wordcount-ui-svc"

	addNode(t, c, ns+"-node")
	a.apply(t, c, stream)
	if got := service(t, c, ns, svc); len(got.selector) != 0 || got.targetPort != "4040" {
		t.Fatalf("as applied: %s, want no selector and targetPort defaulted to the port 4040", got)
	}

	pod := podReady(t, c, ns, "wordcount-driver", ip)

	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()

	p, sock := startRuntime(t, c, pod, args)

	bound := svcState{selector: map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}, targetPort: fmt.Sprint(ui.Port)}
	testcluster.WaitFor(t, 20*time.Second, "the runtime's bind", func() (bool, string) {
		got := service(t, c, ns, svc)
		return got.String() == bound.String(), got.String() + "\n" + p.logs()
	})
	boundSlice := []string{fmt.Sprintf("%s:%d ready=true", ip, ui.Port)}
	waitEndpoints(t, c, ns, svc, boundSlice)

	if d := a.drift(t, c, olderOutput(t, stream)); d == "" {
		t.Errorf("%s's drift check sees nothing in an older output that declares targetPort 4040 (and has no Flux annotation) against the bound Service", a.name)
	} else {
		t.Logf("%s's drift check on an older output: %s", a.name, d)
	}
	for i := 1; i <= 2; i++ {
		noDrift(t, c, a, stream, ns, svc, "after the bind")
		out := a.apply(t, c, stream)
		if got := service(t, c, ns, svc); got.String() != bound.String() {
			t.Fatalf("after the bind, re-apply %d reset the Service: %s, want %s\n%s", i, got, bound, out)
		}
		noReportedChange(t, out, ns, svc, "after the bind")
		holdEndpoints(t, c, ns, svc, boundSlice, 2*time.Second)
	}
	noDrift(t, c, a, stream, ns, svc, "after the bind and the re-applies")
	checkOwners(t, c, ns, svc, a.manager)
	if a.createOnly {
		stream = rollServiceChange(t, c, a, ns, appID, svc, bound, boundSlice)
	}

	// Withdraw as the preStop hook does, then re-apply again: nothing may re-route.
	hook := sidecar.PreStopCommand()
	hook[0] = runtimeBin
	for i, a := range hook {
		if strings.HasPrefix(a, "--socket=") {
			hook[i] = "--socket=" + sock
		}
	}
	if out, err := exec.Command(hook[0], hook[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("preStop hook: %v\n%s\nruntime:\n%s", err, out, p.logs())
	}
	withdrawn := svcState{selector: map[string]string{names.WithdrawnSelectorKey: string(pod.UID)}, targetPort: fmt.Sprint(ui.Port)}
	if got := service(t, c, ns, svc); got.String() != withdrawn.String() {
		t.Fatalf("after the withdrawal: %s, want %s", got, withdrawn)
	}
	waitEndpoints(t, c, ns, svc, nil)
	for i := 1; i <= 2; i++ {
		noDrift(t, c, a, stream, ns, svc, "after the withdrawal")
		out := a.apply(t, c, stream)
		if got := service(t, c, ns, svc); got.String() != withdrawn.String() {
			t.Fatalf("after the withdrawal, re-apply %d changed the Service: %s, want %s\n%s", i, got, withdrawn, out)
		}
		noReportedChange(t, out, ns, svc, "after the withdrawal")
		holdEndpoints(t, c, ns, svc, nil, 2*time.Second)
	}
	checkOwners(t, c, ns, svc, a.manager)
}

// rollServiceChange is the trade-off of an applier that only creates the UI Service (Flux
// with kustomize.toolkit.fluxcd.io/ssa: IfNotPresent): the user changes the Service in Git
// (functionConfig service.type NodePort), the applier leaves the live one as it is, and the
// way docs/gitops.md gives to roll it, a forced server-side apply of the re-rendered UI
// Service, changes it and keeps the bind. It returns the changed output, what the pipeline
// applies from then on.
func rollServiceChange(t *testing.T, c *testcluster.Cluster, a applier, ns, appID, svc string, bound svcState, boundSlice []string) []byte {
	t.Helper()
	changed := strings.Replace(input, "  spec:\n    sparkConf:", "  spec:\n    service:\n      type: NodePort\n    sparkConf:", 1)
	r := renderList(t, strings.NewReplacer("NS", ns, "APPID", appID).Replace(changed))
	typ := func() corev1.ServiceType {
		s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Spec.Type
	}
	out := a.apply(t, c, r.stream)
	if got, ty := service(t, c, ns, svc), typ(); got.String() != bound.String() || ty != corev1.ServiceTypeClusterIP {
		t.Fatalf("%s applied the changed UI Service (type %s, %s), want it left as created (ClusterIP, %s)\n%s", a.name, ty, got, bound, out)
	}
	noDrift(t, c, a, r.stream, ns, svc, "with the changed UI Service in Git")
	out = kubectl(t, c.KubeconfigFile(t, c.Config), uiServiceDoc(t, r.stream), "apply", "--server-side", "--force-conflicts", "-f", "-")
	if got, ty := service(t, c, ns, svc), typ(); got.String() != bound.String() || ty != corev1.ServiceTypeNodePort {
		t.Fatalf("rolled by hand: type %s, %s, want NodePort, %s\n%s", ty, got, bound, out)
	}
	holdEndpoints(t, c, ns, svc, boundSlice, 2*time.Second)
	return r.stream
}

// noDrift: the applier's drift detection sees nothing to correct on the UI Service: a
// GitOps controller that saw the runtime's fields as drift would report the application out
// of sync forever, and correct it at every interval.
func noDrift(t *testing.T, c *testcluster.Cluster, a applier, stream []byte, ns, svc, when string) {
	t.Helper()
	if d := a.drift(t, c, stream); d != "" {
		t.Errorf("%s, %s reports drift on Service %s/%s:\n%s", when, a.name, ns, svc, d)
	}
}

// noReportedChange: a re-apply's own output does not say it changed the UI Service
// (kubectl's client-side `service/<name> configured`, Flux's change set `Service/<ns>/<name>
// configured`; a server-side kubectl apply prints serverside-applied either way).
func noReportedChange(t *testing.T, out, ns, svc, when string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "service/"+svc+" configured" || line == "Service/"+ns+"/"+svc+" configured" {
			t.Fatalf("%s, the re-apply reports it changed the UI Service:\n%s", when, out)
		}
	}
}

// checkOwners: in the Service's managedFields the pipeline's manager owns exactly what the
// manifests declare, the runtime (and only it) owns targetPort, the selector and the
// ownerReference. This is what a GitOps tool sees: the runtime's fields are nobody else's.
func checkOwners(t *testing.T, c *testcluster.Cluster, ns, svc, manager string) {
	t.Helper()
	s, err := c.Client.CoreV1().Services(ns).Get(testcluster.Context(t, 10*time.Second), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, mf := range s.ManagedFields {
		fields := mf.FieldsV1.GetRawString()
		for _, f := range []string{`"f:selector"`, `"f:targetPort"`, `"f:ownerReferences"`} {
			if strings.Contains(fields, f) {
				owners[f] += mf.Manager + " "
			}
		}
		if mf.Manager == manager && !strings.Contains(fields, `"f:ports"`) {
			t.Errorf("%s does not own the ports it declares: %s", manager, fields)
		}
	}
	want := map[string]string{`"f:selector"`: "sparkui-runtime ", `"f:targetPort"`: "sparkui-runtime ", `"f:ownerReferences"`: "sparkui-runtime "}
	if fmt.Sprint(owners) != fmt.Sprint(want) {
		t.Errorf("owners of the runtime's fields: %v, want %v", owners, want)
	}
}
