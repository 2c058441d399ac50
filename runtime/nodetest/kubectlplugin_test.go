package nodetest

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkui/sparkui/testkit/testnode"
)

// pluginApp is one application of the plugin's node test, as the test knows it.
type pluginApp struct {
	ns, name, svc, carrier string
	run                    run // the bound run (zero for the one that never binds)
	tl                     *uiTimeline
}

// endVolume is the emptyDir through which the test ends the handed-off Job's run.
const endVolume = "fakespark-end"

// reportJobs is the functionConfig of the two Jobs: ClusterIP, and the hand-off to the
// History Server when the run ends.
const reportJobs = `apiVersion: sparkui.dev/v1alpha1
kind: SparkUIService
metadata:
  name: sparkui
spec:
  service:
    type: ClusterIP
  runtime:
    image: set-by-renderInput
  historyServer:
    url: ` + historyURL + `
`

// TestKubectlPluginOnNode: the built `kubectl-sparkui` against four applications running at
// once on one real node, each the function's output for an example:
//   - analytics/wordcount: the spark-submit Pod (hostNetwork), bound;
//   - platform/spark-connect: the Spark Connect Deployment, bound (its Pod in its own network
//     namespace);
//   - reports/monthly-report: the report Job with historyServer.url, whose application ends
//     normally once its bind is checked: handed off to the History Server;
//   - reports/stuck-report: the same Job under another name whose UI never proves itself
//     (it answers "Spark is starting up" for an hour): never bound.
//
// `list -A` (plain, -o wide, -o json) shows each one's carrier, state, port and link; `why`
// explains the unbound and the handed-off one; `open` port-forwards through the API server
// and the kubelet to both bound UIs (a GET through the local port answers as that
// application), prints the History link of the handed-off one and refuses the unbound one.
// Every output, and `kubectl describe pod` of each driver, is logged for the record.
func TestKubectlPluginOnNode(t *testing.T) {
	started := time.Now()
	ui := mustBuild(t, "./runtime/internal/fakespark/cmd/fakespark-ui")
	n := startNodeWith(t, testnode.Options{Controllers: []string{"deployment-controller", "replicaset-controller", "job-controller"}},
		standIns(ui, "docker.io/apache/spark:3.5.3", "docker.io/apache/spark:4.0.1", "docker.io/apache/spark:3.5.5"))

	job := example(t, "workloads/report-job.yaml")
	const nameLine = "  name: monthly-report\n"
	if strings.Count(job, nameLine) != 1 {
		t.Fatal("examples/workloads/report-job.yaml changed: update the test's copy")
	}
	var all []*unstructured.Unstructured
	all = append(all, renderFiles(t, "", "examples/spark-submit/manifests.yaml")...)
	all = append(all, renderFiles(t, "service: {type: ClusterIP}", "examples/workloads/connect-server.yaml")...)
	all = append(all, renderInput(t, reportJobs, job+"\n---\n"+strings.Replace(job, nameLine, "  name: stuck-report\n", 1))...)

	apps := map[string]*pluginApp{}
	for _, o := range all {
		switch o.GetKind() {
		case "Pod":
			prefix := strings.TrimSuffix(o.GetName(), "-driver")
			apps[prefix] = &pluginApp{ns: o.GetNamespace(), name: prefix, svc: prefix + "-ui-svc", carrier: "Pod/" + o.GetName()}
		case "Deployment", "Job":
			apps[o.GetName()] = &pluginApp{ns: o.GetNamespace(), name: o.GetName(), svc: o.GetName() + "-sparkui-ui-svc",
				carrier: o.GetKind() + "/" + o.GetName()}
		}
		if o.GetKind() != "Job" {
			continue
		}
		editTemplate(t, o, func(spec *corev1.PodSpec) {
			// The Job's driver asks 4 CPUs and 8 GiB, more than this 2-CPU node has.
			spec.Containers[0].Resources = corev1.ResourceRequirements{}
			if o.GetName() == "monthly-report" {
				// Its application ends when the test writes the file on this emptyDir from
				// the node's side: right after its bind is checked, not on a clock.
				spec.Volumes = append(spec.Volumes, corev1.Volume{Name: endVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
				spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: endVolume, MountPath: "/" + endVolume})
				setEnv(spec, spec.Containers[0].Name, "FAKESPARK_END_FILE", "/"+endVolume+"/end-of-run")
			} else {
				setEnv(spec, spec.Containers[0].Name, "FAKESPARK_STARTUP", "1h")
			}
		})
	}
	const submit, connect, handed, stuck = "wordcount-5b2d0c9e1f3a7b64", "spark-connect", "monthly-report", "stuck-report"
	for _, name := range []string{submit, connect, handed, stuck} {
		if apps[name] == nil {
			t.Fatalf("no application %s in the function's output", name)
		}
	}
	for _, a := range apps {
		n.PrepareNamespace(t, a.ns)
	}
	for _, a := range apps {
		a.tl = watchUI(t, n, a.ns, a.svc)
	}
	serviceAccounts(t, n, all, nil)
	create(t, n, all)

	apps[handed].run = awaitRun(t, n, apps[handed].tl, apps[handed].ns, apps[handed].svc, "label:sparkui.dev/application="+handed, nil)
	end := filepath.Join(n.Dir, "kubelet", "pods", string(apps[handed].run.pod.UID), "volumes", "kubernetes.io~empty-dir", endVolume, "end-of-run")
	if err := writeFile(end); err != nil {
		t.Fatalf("ending %s's run: %v", handed, err)
	}
	ended := time.Now()
	apps[submit].run = awaitRun(t, n, apps[submit].tl, apps[submit].ns, apps[submit].svc, "metadata.name="+submit+"-driver", nil)
	apps[connect].run = awaitRun(t, n, apps[connect].tl, apps[connect].ns, apps[connect].svc, "label:sparkui.dev/application="+connect, nil)
	// By now the others have long bound: a UI that could be proven would have been.
	stuckPod := neverBound(t, n, apps[stuck])
	handedOff(t, n, apps[handed], ended)
	t.Logf("four applications up (two bound, one handed off, one never bound) %s after the test's start", time.Since(started).Round(time.Second))

	p := newPlugin(t, n)
	history := historyURL + "/history/" + apps[handed].run.appID + "/"
	ages := regexp.MustCompile(`\b\d+(s|m|h|m\d+s)\b`)
	squeeze := func(s string) string {
		return regexp.MustCompile(` +`).ReplaceAllString(ages.ReplaceAllString(s, "AGE"), " ")
	}

	list := p.ok("list", "-A")
	want := strings.Join([]string{
		"NAMESPACE NAME CARRIER STATE PORT LINK AGE",
		"analytics " + submit + " Pod/" + submit + "-driver bound " + apps[submit].run.uiPort + " - AGE",
		"platform " + connect + " Deployment/" + connect + " bound " + apps[connect].run.uiPort + " - AGE",
		"reports " + handed + " Job/" + handed + " handed-off 8080 " + history + " AGE",
		"reports " + stuck + " Job/" + stuck + " waiting - - AGE", ""}, "\n")
	if got := squeeze(list); got != want {
		t.Errorf("list -A:\n%s\nwant (spaces squeezed, ages AGE):\n%s", list, want)
	}

	// -o wide: the same rows, then the Service and the driver Pod (SINCE and REASON are the
	// runtime's claims, not asserted here).
	wide := strings.Split(strings.TrimSpace(p.ok("list", "-A", "-o", "wide")), "\n")
	pods := map[string]string{submit: apps[submit].run.pod.Name, connect: apps[connect].run.pod.Name, handed: apps[handed].run.pod.Name, stuck: stuckPod.Name}
	if len(wide) != 5 || !strings.HasPrefix(squeeze(wide[0]), "NAMESPACE NAME CARRIER STATE PORT LINK AGE SERVICE POD SINCE REASON") {
		t.Errorf("list -A -o wide: want a header with SERVICE POD SINCE REASON and four rows:\n%s", strings.Join(wide, "\n"))
	} else {
		for i, name := range []string{submit, connect, handed, stuck} {
			f := strings.Fields(wide[i+1])
			if len(f) < 9 || f[1] != name || f[7] != apps[name].svc || f[8] != pods[name] {
				t.Errorf("list -o wide row %q: want NAME %s, SERVICE %s, POD %s", wide[i+1], name, apps[name].svc, pods[name])
			}
		}
	}

	var doc struct {
		Kind  string `json:"kind"`
		Items []struct {
			Namespace, Name, Service, Carrier, State, Port, Link, Pod string
			Links                                                     map[string]string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(p.ok("list", "-A", "-o", "json")), &doc); err != nil {
		t.Fatalf("list -o json: %v", err)
	}
	if doc.Kind != "ApplicationUIList" || len(doc.Items) != 4 {
		t.Errorf("list -o json: kind %q, %d items; want ApplicationUIList, 4", doc.Kind, len(doc.Items))
	}
	ports := map[string]string{submit: apps[submit].run.uiPort, connect: apps[connect].run.uiPort, handed: "8080"}
	states := map[string]string{submit: "bound", connect: "bound", handed: "handed-off", stuck: "waiting"}
	for _, it := range doc.Items {
		a := apps[it.Name]
		if a == nil {
			t.Errorf("list -o json: unknown application %+v", it)
			continue
		}
		if it.Namespace != a.ns || it.Service != a.svc || it.Carrier != a.carrier || it.State != states[it.Name] || it.Port != ports[it.Name] || it.Pod != pods[it.Name] {
			t.Errorf("list -o json item %+v: want namespace %s, service %s, carrier %s, state %s, port %q, pod %s",
				it, a.ns, a.svc, a.carrier, states[it.Name], ports[it.Name], pods[it.Name])
		}
		if (it.Name == handed) != (it.Link == history && it.Links["history"] == history) {
			t.Errorf("list -o json item %s: link %q, links %v; want the History link %s only on %s", it.Name, it.Link, it.Links, history, handed)
		}
	}

	whyLines(t, p, apps[submit], pods[submit], "Running", "bound to port "+apps[submit].run.uiPort+", from the Service's spec",
		"Link:            -",
		// The example runs under hostNetwork and declares Spark's RPC and block-manager
		// ports: the same warning sparkui-fn gives on the manifests.
		"Checks that fail (sparkui's rules on the live objects):",
		`  warning [SUI011] hostNetwork: true and container "spark-kubernetes-driver" declares ports: they become hostPorts, and drivers declaring the same port cannot share a node`)
	whyLines(t, p, apps[stuck], pods[stuck], "Running", "waiting (no selector: the runtime has not bound it), from the Service's spec", "Link:            -")
	whyLines(t, p, apps[handed], pods[handed], "Succeeded", "handed-off to the History Server redirector (port 8080), from the Service's spec",
		"Link:            "+history, "Sidecar:         sparkui-runtime terminated Completed, exit code 0, restarts 0")

	openForwards(t, p, apps[submit])
	openForwards(t, p, apps[connect])
	out, errOut := p.ok2("open", handed, "-n", apps[handed].ns)
	if out != history+"\n" || !strings.Contains(errOut, handed+"'s run has ended; its UI was handed off to the History Server") {
		t.Errorf("open %s: stdout %q stderr %q; want the History link %s alone on stdout", handed, out, errOut, history)
	}
	if errOut := p.fails("open", stuck, "-n", apps[stuck].ns); !strings.Contains(errOut, stuck+"'s UI is waiting, not bound: nothing to forward to (kubectl sparkui why "+stuck+" -n reports)") {
		t.Errorf("open %s: stderr %q; want the refusal naming the state and `why`", stuck, errOut)
	}

	for _, name := range []string{submit, connect, handed, stuck} {
		p.describe(apps[name].ns, pods[name])
	}
	t.Logf("whole test %s", time.Since(started).Round(time.Second))
}
