package nodetest

// A restart-class change on the node: every carrier rendered twice by the function (before
// and after a sparkui upgrade that changes the runtime image, or a configuration change that
// changes the runtime's args), the two renderings fed to `sparkui-fn validate --baseline`,
// then the first applied and running on the node and the second applied over it as a
// pipeline applies (server-side apply, forced): what the node and the carrier's controller
// do is compared with what the report said.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// changeRow is one carrier and one change.
type changeRow struct {
	name  string
	files []string
	// config is the SparkUIService spec of both renderings beside runtime.image; change, when
	// set, is added to the second's (a configuration change), else the second has the runtime
	// image RuntimeImage2 (a sparkui upgrade).
	config, change string
	kind           string
	// rule is what the report must say about the carrier: SUI070 refused, SUI071 restarted,
	// SUI072 never applied, SUI073 the next run.
	rule   string
	claims []string
	// noController: nothing here runs the carrier's controller (Apache, Stackable): only what
	// the API server does with the apply is asserted.
	noController bool
}

var changeRows = []changeRow{
	{name: "kubeflow SparkApplication", files: []string{"examples/kubeflow/spark-pi.yaml"}, config: "service: {type: ClusterIP}",
		kind: "SparkApplication", rule: "SUI071"},
	{name: "kubeflow ScheduledSparkApplication", files: []string{"examples/kubeflow/nightly-pi.yaml"}, config: "service: {type: ClusterIP}",
		kind: "ScheduledSparkApplication", rule: "SUI073"},
	{name: "spark-submit Pod, runtime image", files: []string{"examples/spark-submit/manifests.yaml"}, kind: "Pod", rule: "SUI071"},
	{name: "spark-submit Pod, historyServer.url", files: []string{"examples/spark-submit/manifests.yaml"},
		change: "historyServer: {url: 'http://history.example:18080'}", kind: "Pod", rule: "SUI070"},
	{name: "Job", files: []string{"examples/workloads/report-job.yaml"}, config: "service: {type: ClusterIP}", kind: "Job", rule: "SUI070"},
	{name: "Deployment", files: []string{"examples/workloads/connect-server.yaml"}, config: "service: {type: ClusterIP}", kind: "Deployment", rule: "SUI071"},
	{name: "StatefulSet", files: []string{"examples/workloads/notebook.yaml"}, config: "service: {type: ClusterIP}",
		kind: "StatefulSet", rule: "SUI071", claims: []string{"work-lab-0"}},
	{name: "CronJob", files: []string{"examples/workloads/report-cronjob.yaml"}, config: "service: {type: ClusterIP}", kind: "CronJob", rule: "SUI073"},
	{name: "Apache SparkApplication", files: []string{"examples/apache-operator/word-count.yaml"}, kind: "SparkApplication", rule: "SUI073", noController: true},
	{name: "kubeflow SparkConnect", files: []string{"testdata/carrier-kubeflow-sparkconnect/input.yaml"}, kind: "SparkConnect", rule: "SUI072"},
	{name: "stackable SparkApplication", files: []string{"testdata/carrier-stackable/input.yaml"}, kind: "SparkApplication", rule: "SUI072", noController: true},
}

// TestRestartClassChangeOnNode: per row, the report's finding for the carrier (exactly one,
// the row's rule), then on the node what applying the change does, which must be what that
// rule says:
//   - SUI070: the API server refuses the apply, at a field the report's path lies under; the
//     running driver is left as it was (same Pod, no restart, still bound);
//   - SUI071: the running driver restarts — a bare Pod's sidecar restarted by the kubelet
//     with the new image (withdrawn, then bound again to the same Pod: the gap is logged);
//     the kubeflow operator's resubmission (INVALIDATING, PENDING_RERUN, SUBMITTED, RUNNING)
//     or a rollout: the old driver withdrawn before its SIGTERM, a new driver bound;
//   - SUI072 (kubeflow SparkConnect, the real controller): the controller reconciles the
//     change but the running server is left as it was (same Pod, old runtime, still bound);
//     once its Pod is deleted the controller makes it again from the new spec;
//   - SUI073: the running driver is left alone and ends by itself; the next run has the change;
//   - with no controller here (SUI072, SUI073 of Apache's and Stackable's operators): the API
//     server takes the apply; what the operator then does is not shown.
func TestRestartClassChangeOnNode(t *testing.T) {
	n := startCarrierNode(t)
	op := startKubeflow(t, n)
	started := time.Now()
	for _, row := range changeRows {
		t.Run(row.name, func(t *testing.T) {
			rowStart := time.Now()
			changeRun(t, n, op, row)
			t.Logf("%s: %s", row.name, time.Since(rowStart).Round(100*time.Millisecond))
		})
	}
	t.Logf("all changes: %s on one node", time.Since(started).Round(time.Second))
}

// finding is one result of the baseline report (its JSON form).
type finding struct {
	Rule, Severity, Message string
	ResourceRef             struct{ Kind, Name, Namespace string }
	Field                   struct{ Path string }
}

// baseline writes both renderings and runs `sparkui-fn validate --baseline OLD NEW -o json`,
// returning its findings.
func baseline(t *testing.T, old, new []*unstructured.Unstructured) []finding {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, objs []*unstructured.Unstructured) string {
		var b bytes.Buffer
		for _, o := range objs {
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cmd := exec.Command(fnBinary(t), "validate", "--baseline", write("old.yaml", old), write("new.yaml", new), "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("sparkui-fn validate --baseline: %v\n%s", err, stderr.String())
	}
	var rep struct{ Results []finding }
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the report: %v\n%s", err, stdout.String())
	}
	return rep.Results
}

// renderings are a row's two renderings, the carrier of each, and the report's one finding
// on it. Every other object must be equal in both: a pipeline's re-apply of them changes
// nothing, so only the carrier is applied again.
func renderings(t *testing.T, row changeRow) (old, new []*unstructured.Unstructured, oldC, newC *unstructured.Unstructured, f finding) {
	t.Helper()
	old = renderWith(t, RuntimeImage, row.config, row.files...)
	if row.change != "" {
		new = renderWith(t, RuntimeImage, row.config+"\n"+row.change, row.files...)
	} else {
		new = renderWith(t, RuntimeImage2, row.config, row.files...)
	}
	pick := func(objs []*unstructured.Unstructured) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == row.kind {
				return o
			}
		}
		t.Fatalf("no %s in the function's output", row.kind)
		return nil
	}
	oldC, newC = pick(old), pick(new)
	if len(old) != len(new) {
		t.Fatalf("the renderings have %d and %d objects", len(old), len(new))
	}
	for i := range old {
		if old[i] != oldC && !reflect.DeepEqual(old[i].Object, new[i].Object) {
			t.Errorf("%s %s differs between the renderings: only the carrier should", old[i].GetKind(), old[i].GetName())
		}
	}
	var mine []finding
	for _, r := range baseline(t, old, new) {
		if r.ResourceRef.Kind == row.kind && r.ResourceRef.Name == newC.GetName() {
			mine = append(mine, r)
		} else {
			t.Errorf("a finding on another object: %+v", r)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("the report has %d findings on %s %s, want one: %+v", len(mine), row.kind, newC.GetName(), mine)
	}
	f = mine[0]
	if f.Rule != row.rule || !strings.HasPrefix(f.Message, "["+row.rule+"]") {
		t.Errorf("the report says %s (%s): %s; want %s", f.Rule, f.Severity, f.Message, row.rule)
	}
	t.Logf("report: %s %s at %s: %s", f.Rule, f.Severity, f.Field.Path, f.Message)
	return old, new, oldC, newC, f
}
