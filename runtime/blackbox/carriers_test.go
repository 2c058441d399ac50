package blackbox

// carriers_test.go: the runtime end to end per carrier kind. For each
// carrier the built sparkui-fn renders testdata/carrier-*/input.yaml; the UI Service, Role,
// RoleBinding (and the ServiceAccount) it emits are applied; the driver Pod is built from the
// REWRITTEN resource the way its operator or controller builds it (the builders of carrier_builders_test.go, after
// docs/operators.md, which names the operators' source files); the Pod is created and made Ready; the
// built runtime then runs as the kubelet runs the sparkui-runtime container of that Pod
// (podnet_test.go), as the Pod's ServiceAccount. Asserted: the bind (targetPort = the UI's
// port, selector = exactly this run's selector, EndpointSlice = this Pod's IP:port), the
// withdrawal (preStop hook or SIGTERM: the withdrawn selector, no endpoint, exit 0), and that
// the Service outlives the Pod. Carriers with successive runs (ScheduledSparkApplication,
// CronJob) run two: run 2 takes the Service over, run 1's withdrawal leaves it routed to run 2,
// run 2's withdraws it.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// driverBuilder builds run's driver Pod (run 1, 2, …) from the rewritten carrier, and says
// what the stand-in Spark UI of that run lists.
type driverBuilder func(t *testing.T, carrier *yaml.RNode, run int) (*corev1.Pod, uiOptions)

type carrierCase struct {
	dir      string // testdata/<dir>
	runLabel string // the run label of docs/operators.md's table, "" for none
	// role is the driver Pod's spark-role, "" for Spark's driver.
	role string
	// noHook: the operator replaces the driver container's lifecycle, so the Pod has no
	// withdraw hook and the runtime withdraws on SIGTERM.
	noHook bool
	runs   int
	build  driverBuilder
	// edit, when set, changes the input before rendering.
	edit func(t *testing.T, input string) string
	// unproven: the runtime cannot prove the UI is this Pod's and must never bind it.
	unproven bool
}

func TestCarrierKubeflowTemplate(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-template", runLabel: names.LabelAppSelector, runs: 1, build: kubeflowDriver(false, false)})
}

func TestCarrierKubeflowWebhook(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-webhook", runLabel: names.LabelAppSelector, runs: 1, build: kubeflowDriver(true, false)})
}

func TestCarrierKubeflowScheduled(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-scheduled", runLabel: names.LabelAppSelector, runs: 2, build: kubeflowDriver(false, true)})
}

// TestCarrierKubeflowSparkConnect: the Pod <name>-server kubeflow's SparkConnect controller
// makes from the rewritten spec.server.template. Its server container's lifecycle is the
// operator's, so no withdraw hook reaches the Pod: the runtime (a native sidecar, stopped
// only after the server container has exited) withdraws on SIGTERM.
func TestCarrierKubeflowSparkConnect(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-sparkconnect", role: "connect-server", noHook: true, runs: 1, build: connectServer})
}

// TestCarrierKubeflowSparkConnectService: a server container not named
// spark-kubernetes-driver (the first is the server), and a server Service named by the user
// (spec.server.service), which sparkui's UI Service keeps clear of.
func TestCarrierKubeflowSparkConnectService(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-kubeflow-sparkconnect-service", role: "connect-server", noHook: true, runs: 1, build: connectServer})
}

func TestCarrierApacheV1(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-apache-v1", runLabel: names.LabelAppSelector, runs: 1, build: apacheDriver})
}

// TestCarrierApacheV1Template: a v1 SparkApplication with a template of its own (a fixed
// spark.ui.port, its container named by the function's podTemplateContainerName).
func TestCarrierApacheV1Template(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-apache-v1-template", runLabel: names.LabelAppSelector, runs: 1, build: apacheDriver})
}

func TestCarrierApacheV1beta1(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-apache-v1beta1", runLabel: names.LabelAppSelector, runs: 1, build: apacheDriver})
}

// TestCarrierDeployment: the golden Deployment (Spark Connect, client mode under hostNetwork,
// spark.ui.port=0) with SUI022's fix applied (--conf spark.kubernetes.driver.pod.name=$(POD_NAME),
// POD_NAME from the downward API), which lets the runtime prove the UI on the node is this
// Pod's.
func TestCarrierDeployment(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-deployment", runLabel: podTemplateHash, runs: 1, build: workloadDriver})
}

// TestCarrierDeploymentUnprovenIdentity: the golden Deployment without its
// spark.kubernetes.driver.pod.name setting: client mode under hostNetwork with neither
// spark.app.id nor the pod name, so nothing proves which UI on the node is this Pod's. The
// function reports it (SUI022, an error: it still writes the items); deployed anyway, the
// runtime must find the UI, say why it does not bind, and not bind.
func TestCarrierDeploymentUnprovenIdentity(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-deployment", runLabel: podTemplateHash, runs: 1, build: workloadDriver, unproven: true,
		edit: func(t *testing.T, in string) string {
			const conf = "          - --conf\n          - spark.kubernetes.driver.pod.name=$(POD_NAME)\n"
			if strings.Count(in, conf) != 1 {
				t.Fatal("the Deployment input changed: update the edit")
			}
			return strings.Replace(in, conf, "", 1)
		}})
}

func TestCarrierStatefulSet(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-statefulset", runLabel: stsPodName, runs: 1, build: workloadDriver})
}

func TestCarrierJob(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-job", runLabel: jobControllerUID, runs: 1, build: workloadDriver})
}

func TestCarrierCronJob(t *testing.T) {
	runCarrier(t, carrierCase{dir: "carrier-cronjob", runLabel: jobControllerUID, runs: 2, build: workloadDriver})
}

// driverRun is one run's driver Pod with its runtime.
type driverRun struct {
	pod    *corev1.Pod
	ip     string
	proc   *runtimeProc
	sock   string
	uiPort int
	sel    map[string]string // this run's selector
}

func (d driverRun) slice() []string { return []string{fmt.Sprintf("%s:%d ready=true", d.ip, d.uiPort)} }

func runCarrier(t *testing.T, cc carrierCase) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	r, carrier := renderCarrier(t, cc.dir, ns, cc.edit, cc.unproven)
	// An input whose identity cannot be proven is reported at build time (SUI022); the test
	// deploys it anyway to see the runtime refuse it too.
	if got := strings.Contains(r.results, "[SUI022]"); got != cc.unproven {
		t.Fatalf("SUI022 reported: %v, want %v\n%s", got, cc.unproven, r.results)
	}
	app := carrier.GetName()
	svc := applySparkui(t, c, ns, r)
	node := ns + "-node"
	addNode(t, c, node)

	start := func(run int) driverRun {
		pod, ui := cc.build(t, carrier, run)
		pod.Namespace, pod.Spec.NodeName = ns, node
		if pod.Spec.ServiceAccountName == "" && pod.Spec.DeprecatedServiceAccount == "" {
			// The ServiceAccount admission plugin's default, which this control plane runs
			// without. (The API server itself copies a deprecated serviceAccount into
			// serviceAccountName: core/v1 conversion of PodSpec.)
			pod.Spec.ServiceAccountName = "default"
		}
		created := createBuiltPod(t, c, ns, pod, run)
		ip := fmt.Sprintf("10.244.%d.%d", len(ns)%200, 10+run)
		if created.Spec.HostNetwork {
			ip = fmt.Sprintf("192.0.2.%d", 100+run)
		}
		d := driverRun{pod: podReady(t, c, ns, created.Name, ip), ip: ip}
		role := cc.role
		if role == "" {
			role = names.RoleDriver
		}
		d.sel = map[string]string{labelAppID: app, names.LabelSparkRole: role}
		if cc.runLabel != "" {
			d.sel[cc.runLabel] = d.pod.Labels[cc.runLabel]
			if d.pod.Labels[cc.runLabel] == "" {
				t.Fatalf("run %d: the driver Pod has no run label %s: %v", run, cc.runLabel, d.pod.Labels)
			}
		}
		d.proc, d.sock, d.uiPort = startPodRuntime(t, c, d.pod, ui)
		if cc.unproven {
			return d
		}
		want := svcState{selector: d.sel, targetPort: strconv.Itoa(d.uiPort)}
		testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("run %d's bind", run), func() (bool, string) {
			got := service(t, c, ns, svc)
			return got.String() == want.String(), got.String() + "\n" + d.proc.logs()
		})
		waitEndpoints(t, c, ns, svc, d.slice())
		noOwner(t, c, ns, svc)
		return d
	}
	withdrawn := func(d driverRun) {
		t.Helper()
		want := svcState{selector: map[string]string{names.WithdrawnSelectorKey: string(d.pod.UID)}, targetPort: strconv.Itoa(d.uiPort)}
		if got := service(t, c, ns, svc); got.String() != want.String() {
			t.Fatalf("after %s's withdrawal: %s, want %s\n%s", d.pod.Name, got, want, d.proc.logs())
		}
		waitEndpoints(t, c, ns, svc, nil)
	}

	first := start(1)
	if cc.unproven {
		testcluster.WaitFor(t, 30*time.Second, "the runtime to say the UI's identity cannot be proven", func() (bool, string) {
			return strings.Contains(first.proc.logs(), "identity cannot be proven"), first.proc.logs()
		})
		time.Sleep(2 * time.Second)
		if got := service(t, c, ns, svc); len(got.selector) != 0 {
			t.Fatalf("bound a UI whose identity is not proven: %s\n%s", got, first.proc.logs())
		}
		waitEndpoints(t, c, ns, svc, nil)
		if code := sigterm(t, first); code != 0 {
			t.Errorf("runtime exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
		}
		return
	}
	if cc.runs == 1 && cc.noHook {
		// The kubelet stops a native sidecar only after the main containers have exited:
		// SIGTERM is the runtime's cue.
		if ic := sidecarOf(t, first.pod); ic.RestartPolicy == nil || *ic.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Fatalf("the runtime is no native sidecar in %s", first.pod.Name)
		}
		for _, ctr := range first.pod.Spec.Containers {
			if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil && ctr.Lifecycle.PreStop.Exec != nil &&
				sidecar.IsWithdrawCommand(ctr.Lifecycle.PreStop.Exec.Command) {
				t.Fatalf("%s: container %s has a withdraw hook, which its operator replaces", first.pod.Name, ctr.Name)
			}
		}
		holdEndpoints(t, c, ns, svc, first.slice(), time.Second)
		if code := sigterm(t, first); code != 0 {
			t.Errorf("runtime exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
		}
		withdrawn(first)
		deletePod(t, c, first.pod)
		serviceOutlives(t, c, ns, svc)
		return
	}
	if cc.runs == 1 {
		preStop(t, first)
		withdrawn(first)
		if code := sigterm(t, first); code != 0 {
			t.Errorf("runtime exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
		}
		deletePod(t, c, first.pod)
		serviceOutlives(t, c, ns, svc)
		return
	}

	// Two runs share the Service: run 2 takes it over while run 1 still runs.
	second := start(2)
	holdEndpoints(t, c, ns, svc, second.slice(), time.Second)
	// Run 1 ends (its preStop hook): it must not undo run 2's bind.
	preStop(t, first)
	if got, want := service(t, c, ns, svc), (svcState{selector: second.sel, targetPort: strconv.Itoa(second.uiPort)}); got.String() != want.String() {
		t.Fatalf("run 1's withdrawal changed run 2's bind: %s, want %s\n%s", got, want, first.proc.logs())
	}
	holdEndpoints(t, c, ns, svc, second.slice(), 2*time.Second)
	if code := sigterm(t, first); code != 0 {
		t.Errorf("run 1: exit code %d after SIGTERM, want 0\n%s", code, first.proc.logs())
	}
	deletePod(t, c, first.pod)
	holdEndpoints(t, c, ns, svc, second.slice(), time.Second)
	// Run 2 ends by SIGTERM (the Pod's deletion, no preStop hook run): withdrawn, exit 0.
	if code := sigterm(t, second); code != 0 {
		t.Errorf("run 2: exit code %d after SIGTERM, want 0\n%s", code, second.proc.logs())
	}
	withdrawn(second)
	deletePod(t, c, second.pod)
	serviceOutlives(t, c, ns, svc)
}
