package examples_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/validate"
	"github.com/sparkui/sparkui/validate/policy"
)

// policyRef finds which sparkui policy answered, in a denial ("ValidatingAdmissionPolicy
// 'sparkui-…' with binding '…' denied request: …") or a warning ("Validation failed for
// ValidatingAdmissionPolicy 'sparkui-…' with binding '…': …"), as k8s.io/apiserver's
// admission/plugin/policy/validating dispatcher words them.
var policyRef = regexp.MustCompile(`ValidatingAdmissionPolicy '(sparkui-[a-z0-9-]+)'`)

// admitter creates objects on the test API server, one at a time, and tells which sparkui
// policies refused or warned.
type admitter struct {
	t        testing.TB
	c        *testcluster.Cluster
	dyn      *dynamic.DynamicClient
	mu       sync.Mutex
	warnings []string
}

func (w *admitter) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// answer is what the API server said to one create.
type answer struct {
	err    error
	denied []string // sparkui policies that refused it
	warned []string // sparkui policies that warned
}

func (w *admitter) create(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) answer {
	w.mu.Lock()
	w.warnings = nil
	w.mu.Unlock()
	var a answer
	m, err := w.c.Mapping(obj)
	if err != nil {
		a.err = err
		return a
	}
	ri := dynamic.ResourceInterface(w.dyn.Resource(m.Resource))
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		w.c.EnsureNamespace(w.t, ns)
		ri = w.dyn.Resource(m.Resource).Namespace(ns)
	}
	opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, a.err = ri.Create(ctx, obj, opts)
	if a.err != nil {
		for _, m := range policyRef.FindAllStringSubmatch(a.err.Error(), -1) {
			a.denied = append(a.denied, m[1])
		}
	}
	w.mu.Lock()
	for _, t := range w.warnings {
		for _, m := range policyRef.FindAllStringSubmatch(t, -1) {
			a.warned = append(a.warned, m[1])
		}
	}
	w.mu.Unlock()
	return a
}

// TestAdmissionPolicies installs what `sparkui-fn policy` prints on a real kube-apiserver
// (with the kubeflow, Apache and route CRDs) and checks that: the API server type-checks
// every expression against the matched resources' schemas without a warning; each policy
// refuses (an error rule) or warns about (a warning rule) its bad manifest, with the rule id
// first in the message; and, for every rule fixture, golden output and example, a sparkui
// policy answers an object exactly when the function reports that rule for it.
func TestAdmissionPolicies(t *testing.T) {
	// kube-controller-manager's status controller is what type-checks the policies.
	opts := dualStack(t)
	opts.ControllerManager = true
	opts.Controllers = []string{"validatingadmissionpolicy-status-controller"}
	c := testcluster.Start(t, opts)
	ctx := testcluster.Context(t, 5*time.Minute)

	cmd := exec.Command("bin/sparkui-fn", "policy")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bin/sparkui-fn policy: %v", err)
	}
	objs, err := (&kio.ByteReader{Reader: strings.NewReader(string(out)), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]validate.Rule{} // policy name → rule
	actions := map[string]string{}
	for _, r := range policy.Enforced() {
		for _, p := range r.Admission {
			rules[policy.Name(r.ID, p)] = r
			actions[policy.Name(r.ID, p)] = policy.Action(r.Severity)
		}
	}
	if len(objs) != 2*len(rules) || len(rules) != len(admissionCases) {
		t.Fatalf("%d objects for %d policies, %d cases", len(objs), len(rules), len(admissionCases))
	}
	// Installed as docs/admission.md says, with the kubectl on the machine.
	kubeconfig := c.KubeconfigFile(t, c.Config)
	install := exec.Command("bash", "-o", "pipefail", "-c", "bin/sparkui-fn policy | kubectl apply -f -")
	install.Dir = root
	install.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("sparkui-fn policy | kubectl apply -f -: %v\n%s", err, out)
	} else if n := strings.Count(string(out), " created\n"); n != len(objs) {
		t.Fatalf("kubectl apply created %d objects, want %d:\n%s", n, len(objs), out)
	}

	// kube-controller-manager's validatingadmissionpolicy-status-controller type-checks a
	// policy's expressions against the schemas the API server serves (the CRDs' included)
	// and reports what does not check in status.typeChecking.expressionWarnings (the policy is still
	// enforced, and an expression that fails at run time refuses through failurePolicy Fail).
	vap := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	for name := range rules {
		testcluster.WaitFor(t, time.Minute, name+" type-checked", func() (bool, string) {
			p, err := c.Dynamic.Resource(vap).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			gen, _, _ := unstructured.NestedInt64(p.Object, "status", "observedGeneration")
			if gen < p.GetGeneration() {
				return false, fmt.Sprintf("observedGeneration %d < %d", gen, p.GetGeneration())
			}
			tc, found, _ := unstructured.NestedMap(p.Object, "status", "typeChecking")
			if !found {
				return false, "no status.typeChecking"
			}
			if w, _, _ := unstructured.NestedSlice(tc, "expressionWarnings"); len(w) > 0 {
				t.Errorf("%s: the API server's type checker warns: %v", name, w)
			}
			return true, ""
		})
	}

	cfg := rest.CopyConfig(c.Config)
	w := &admitter{t: t, c: c}
	cfg.WarningHandler = w
	if w.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}

	// One bad manifest per policy. Policies take a moment to become effective (the
	// admission plugin learns them through an informer): each case is retried, bounded.
	installed := time.Now()
	for _, name := range slices.Sorted(maps.Keys(admissionCases)) {
		r, ok := rules[name]
		if !ok {
			t.Errorf("case %s: no such policy", name)
			continue
		}
		// A UI Service on its own is no application's for the function, which judges it
		// next to its driver: the fixture sweep below has them together.
		u, err := testcluster.DecodeYAML([]byte(admissionCases[name]))
		if err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "Service" && !functionReports(t, admissionCases[name])[r.ID] {
			t.Errorf("case %s: the function does not report %s for it", name, r.ID)
		}
		var last answer
		testcluster.WaitFor(t, time.Minute, name+" answers", func() (bool, string) {
			last = w.create(ctx, u, true)
			switch actions[name] {
			case "Deny":
				return strings.Join(last.denied, ",") == name, fmt.Sprintf("%v", last.err)
			default:
				return last.err == nil && strings.Join(last.warned, ",") == name, fmt.Sprintf("err %v, warnings %v", last.err, last.warned)
			}
		})
		text := fmt.Sprint(last.err)
		if actions[name] == "Warn" {
			w.mu.Lock()
			text = strings.Join(w.warnings, "\n")
			w.mu.Unlock()
		}
		if !strings.Contains(text, ": ["+r.ID+"] "+r.Title+": ") {
			t.Errorf("%s: the answer does not carry the rule id and title: %s", name, text)
		}
		t.Logf("%s (%s), %s after the policies were type-checked: %s", name, actions[name], time.Since(installed).Round(time.Millisecond), text)
	}

	// The near misses and the objects without the fields a policy reads: admitted, with no
	// sparkui policy answering (an expression that failed would refuse or warn). Every
	// policy is effective by now: its bad manifest was answered above.
	for _, name := range slices.Sorted(maps.Keys(admittedCases)) {
		r, ok := rules[name]
		if !ok {
			t.Errorf("admitted case %s: no such policy", name)
			continue
		}
		for i, doc := range admittedCases[name] {
			if functionReports(t, doc)[r.ID] {
				t.Errorf("admitted case %s[%d]: the function reports %s for it", name, i, r.ID)
			}
			u, err := testcluster.DecodeYAML([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			a := w.create(ctx, u, true)
			w.mu.Lock()
			warnings := strings.Join(w.warnings, "\n")
			w.mu.Unlock()
			if a.err != nil || len(a.denied) > 0 || len(a.warned) > 0 || strings.Contains(warnings, "sparkui") {
				t.Errorf("admitted case %s[%d]: err %v, warnings %q", name, i, a.err, warnings)
				continue
			}
			t.Logf("admitted case %s[%d] (%s %s): admitted, no sparkui policy answers", name, i, u.GetKind(), u.GetAPIVersion())
		}
	}

	// More ways to get a policy's one shape wrong: each refused (or warned about) by it, and
	// reported by the function.
	for _, name := range slices.Sorted(maps.Keys(refusedCases)) {
		r, ok := rules[name]
		if !ok {
			t.Errorf("refused case %s: no such policy", name)
			continue
		}
		for i, doc := range refusedCases[name] {
			if !functionReports(t, doc)[r.ID] {
				t.Errorf("refused case %s[%d]: the function does not report %s for it", name, i, r.ID)
			}
			u, err := testcluster.DecodeYAML([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			a := w.create(ctx, u, true)
			if got := strings.Join(append(a.denied, a.warned...), ","); got != name {
				t.Errorf("refused case %s[%d]: answered by %q, err %v", name, i, got, a.err)
				continue
			}
			t.Logf("refused case %s[%d]: %v", name, i, a.err)
		}
	}

	// What a user sees: kubectl's server-side dry run is refused with the rule id.
	dry := exec.Command("kubectl", "create", "--dry-run=server", "-f", "-")
	dry.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	dry.Stdin = strings.NewReader(admissionCases["sparkui-sui037-apache"])
	if out, err := dry.CombinedOutput(); err == nil || !strings.Contains(string(out), `sparkapplications.spark.apache.org "pi" is forbidden: ValidatingAdmissionPolicy 'sparkui-sui037-apache' with binding 'sparkui-sui037-apache' denied request: [SUI037] client mode in an Apache SparkApplication: `) {
		t.Errorf("kubectl create --dry-run=server of the SUI037 case: %v\n%s", err, out)
	} else {
		t.Logf("kubectl: %s", out)
	}

	// A real create (not a dry run) is refused the same way: dry run runs admission too,
	// which is what the fixture sweep below relies on.
	u, _ := testcluster.DecodeYAML([]byte(admissionCases["sparkui-sui031-kubeflow"]))
	if a := w.create(ctx, u, false); strings.Join(a.denied, ",") != "sparkui-sui031-kubeflow" {
		t.Errorf("real create of the SUI031 case: %v", a.err)
	}

	// Every rule fixture, golden output and example: a policy of rule X answers an object
	// exactly when the function reports X for it (where the policy matches the object's
	// resource and its create reaches admission at all).
	type source struct{ items, results string }
	var sources []source
	inputs, _ := filepath.Glob("../validate/testdata/*/input.yaml")
	for _, in := range inputs {
		sources = append(sources, source{in, filepath.Join(filepath.Dir(in), "results.yaml")})
	}
	goldens, _ := filepath.Glob("../testdata/*/expected.yaml")
	for _, g := range goldens {
		sources = append(sources, source{g, g})
	}
	examples, _ := filepath.Glob("../examples/*/expected.yaml")
	for _, e := range examples {
		sources = append(sources, source{e, ""})
	}
	if len(inputs) < 80 || len(goldens) < 25 || len(examples) < 4 {
		t.Fatalf("found %d rule fixtures, %d goldens, %d examples", len(inputs), len(goldens), len(examples))
	}
	fired := map[string]int{}
	admitted := 0
	for _, s := range sources {
		items, want := readSource(t, s.items, s.results)
		for _, it := range items {
			if it.GetKind() == "Kptfile" || it.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
				continue
			}
			doc, _ := it.String()
			u, err := testcluster.DecodeYAML([]byte(doc))
			if err != nil {
				continue // duplicate keys (SUI021): no client sends it
			}
			key := it.GetKind() + " " + it.GetNamespace() + "/" + it.GetName()
			wantIDs := aloneWhereUnseen(t, it, doc, want[key])
			a := w.create(ctx, u, true)
			got := map[string]bool{}
			for _, p := range append(a.denied, a.warned...) {
				got[rules[p].ID] = true
				fired[p]++
				if !wantIDs[rules[p].ID] {
					t.Errorf("%s: %s: policy %s answers, but the function does not report %s for it", s.items, key, p, rules[p].ID)
				}
			}
			if a.err == nil {
				admitted++
			}
			reached := a.err == nil || len(a.denied) > 0
			for id := range wantIDs {
				if got[id] || !reached {
					continue
				}
				for name, r := range rules {
					if r.ID == id && matches(t, c, u, r, name) {
						t.Errorf("%s: %s: the function reports %s, but policy %s admits it (err %v)", s.items, key, id, name, a.err)
					}
				}
			}
		}
	}
	if admitted < 300 {
		t.Errorf("only %d objects admitted", admitted)
	}
	t.Logf("fixture sweep: %d objects admitted; policy answers: %v", admitted, fired)
}
