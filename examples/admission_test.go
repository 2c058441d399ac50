package examples_test

import (
	"context"
	"encoding/json"
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
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/validate"
	"github.com/sparkui/sparkui/validate/policy"
)

// admissionCases are one manifest per admission policy that the policy refuses (an error
// rule) or warns about (a warning rule): the policy named by the key must answer it with its
// rule's id.
var admissionCases = map[string]string{
	"sparkui-sui004-ui-service": `apiVersion: v1
kind: Service
metadata:
  name: pi-ui-svc
  namespace: analytics
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-0123456789abcdef}
  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}
spec:
  selector: {spark-app-selector: spark-0123456789abcdef, spark-role: driver}
  ports: [{name: spark-ui, protocol: TCP, port: 4040}]
`,
	"sparkui-sui040-ui-service": `apiVersion: v1
kind: Service
metadata:
  name: lab-sparkui-ui-svc
  namespace: notebooks
  labels: {app.kubernetes.io/managed-by: sparkui, sparkui.dev/application: lab}
  annotations: {kustomize.toolkit.fluxcd.io/ssa: Override}
spec:
  ports: [{name: spark-ui, protocol: TCP, port: 4040}]
`,
	"sparkui-sui011-pod": `apiVersion: v1
kind: Pod
metadata:
  name: pi-driver
  namespace: analytics
  labels: {spark-role: driver, spark-app-selector: spark-0123456789abcdef}
spec:
  hostNetwork: true
  containers:
  - name: spark-kubernetes-driver
    image: spark:3.5.5
    ports: [{name: driver-rpc-port, containerPort: 7078}]
`,
	"sparkui-sui011-workload": `apiVersion: apps/v1
kind: Deployment
metadata: {name: connect, namespace: platform}
spec:
  strategy: {type: Recreate}
  selector: {matchLabels: {app: connect}}
  template:
    metadata: {labels: {app: connect, spark-role: driver}}
    spec:
      hostNetwork: true
      containers: [{name: connect, image: spark:4.0.1, ports: [{name: spark-connect, containerPort: 15002}]}]
`,
	"sparkui-sui011-job": `apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: batch}
spec:
  template:
    metadata: {labels: {spark-role: driver}}
    spec:
      hostNetwork: true
      restartPolicy: Never
      containers: [{name: driver, image: spark:3.5.5, ports: [{name: spark-ui, containerPort: 4040}]}]
`,
	"sparkui-sui011-cronjob": `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: batch}
spec:
  schedule: "0 2 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        metadata: {labels: {spark-role: driver}}
        spec:
          hostNetwork: true
          restartPolicy: Never
          containers: [{name: driver, image: spark:3.5.5, ports: [{name: spark-ui, containerPort: 4040}]}]
`,
	"sparkui-sui031-kubeflow": kubeflowApp("SparkApplication", `
  sparkConf: {spark.ui.port: "0"}`),
	"sparkui-sui031-kubeflow-scheduled": kubeflowScheduled(`concurrencyPolicy: Forbid`, `
    sparkConf: {spark.ui.port: "+00"}`),
	"sparkui-sui031-apache": apacheApp("v1beta1", `
  sparkConf: {spark.ui.port: "0"}`),
	"sparkui-sui037-apache": apacheApp("v1", `
  deploymentMode: ClientMode`),
	"sparkui-sui034-kubeflow": kubeflowApp("SparkApplication", `
  sparkConf: {spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml}`),
	"sparkui-sui034-kubeflow-scheduled": kubeflowScheduled(`concurrencyPolicy: Forbid`, `
    sparkConf: {spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml}`),
	"sparkui-sui034-apache": apacheApp("v1", `
  sparkConf: {spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml}`),
	"sparkui-sui035-workload": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: lab, namespace: notebooks}
spec:
  serviceName: lab
  replicas: 2
  selector: {matchLabels: {app: lab}}
  template:
    metadata: {labels: {app: lab, spark-role: driver}}
    spec:
      containers: [{name: notebook, image: quay.io/jupyter/pyspark-notebook:spark-3.5.5}]
`,
	"sparkui-sui035-job": `apiVersion: batch/v1
kind: Job
metadata: {name: nightly, namespace: batch}
spec:
  parallelism: 3
  template:
    metadata: {labels: {spark-role: driver}}
    spec:
      restartPolicy: Never
      containers: [{name: driver, image: spark:3.5.5}]
`,
	"sparkui-sui035-cronjob": `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: batch}
spec:
  schedule: "0 2 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      parallelism: 2
      template:
        metadata: {labels: {spark-role: driver}}
        spec:
          restartPolicy: Never
          containers: [{name: driver, image: spark:3.5.5}]
`,
	"sparkui-sui036-deployment": `apiVersion: apps/v1
kind: Deployment
metadata: {name: connect, namespace: platform}
spec:
  selector: {matchLabels: {app: connect}}
  template:
    metadata: {labels: {app: connect, spark-role: driver}}
    spec:
      containers: [{name: connect, image: spark:4.0.1}]
`,
	"sparkui-sui036-cronjob": `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: batch}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        metadata: {labels: {spark-role: driver}}
        spec:
          restartPolicy: Never
          containers: [{name: driver, image: spark:3.5.5}]
`,
	"sparkui-sui036-kubeflow-scheduled": kubeflowScheduled(`concurrencyPolicy: Allow`, ``),
	// kubeflow's own driver.hostNetwork puts the driver on the host network as the
	// template's does (its webhook applies it).
	"sparkui-sui011-kubeflow": kubeflowAppWith("SparkApplication", `, hostNetwork: true,
    template: {spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: driver-rpc-port, containerPort: 7078}]}]}}`, ``),
	"sparkui-sui011-kubeflow-scheduled": kubeflowScheduledWith(`concurrencyPolicy: Forbid`, `,
      template: {spec: {hostNetwork: true, containers: [{name: spark-kubernetes-driver, ports: [{name: spark-ui, containerPort: 4040}]}]}}`, ``),
	"sparkui-sui011-apache": apacheApp("v1", `
  driverSpec:
    podTemplateSpec:
      spec:
        hostNetwork: true
        containers: [{name: spark-kubernetes-driver, ports: [{name: spark-ui, containerPort: 4040}]}]`),
	"sparkui-sui011-sparkconnect": sparkConnect(`
      spec:
        hostNetwork: true
        containers: [{name: spark-kubernetes-driver, image: spark:4.0.1, ports: [{name: spark-connect, containerPort: 15002}]}]`),
	"sparkui-sui011-stackable": stackableApp(``, `
  driver:
    podOverrides:
      spec:
        hostNetwork: true
        containers: [{name: spark, ports: [{name: spark-ui, containerPort: 4040}]}]`),
	"sparkui-sui031-stackable": stackableApp(`spark.ui.port: "-0"`, ``),
	"sparkui-sui034-stackable": stackableApp(`spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml`, ``),
	// The mutation issue 34 names: the resourceNames line removed, every Service granted.
	"sparkui-sui061-binder-role": binderRole(`
- apiGroups: [""]
  resources: [services]
  verbs: [get, patch]`),
}

// refusedCases are more manifests the policy named by the key must answer (as its case in
// admissionCases), each a way the one rule can grant more than it should.
var refusedCases = map[string][]string{
	"sparkui-sui061-binder-role": {
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: ["*"]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch, delete]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc, other-ui-svc]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [kubernetes]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: ["", apps]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: [""]
  resources: [services, pods]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get]`),
		binderRole(``),
	},
}

// admittedCases are manifests the policy named by the key admits, and no other sparkui
// policy answers, nor does the function report the policy's rule for them: the near misses
// of its bad manifest, and the objects that leave out the optional fields its expressions
// read (which must be guarded: an expression that fails refuses, failurePolicy Fail).
var admittedCases = map[string][]string{
	"sparkui-sui011-kubeflow": {
		// No template: nothing the function reads as the driver's containers (driver.ports
		// is the webhook's, which the rule does not look at).
		kubeflowAppWith("SparkApplication", `, hostNetwork: true, ports: [{name: extra, containerPort: 9090, protocol: TCP}]`, ``),
		kubeflowAppWith("SparkApplication", `, hostNetwork: true, template: {metadata: {labels: {team: data}}}`, ``),
		kubeflowAppWith("SparkApplication", `, hostNetwork: false,
    template: {spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: driver-rpc-port, containerPort: 7078}]}]}}`, ``),
		kubeflowAppWith("SparkApplication", `, template: {spec: {hostNetwork: true, containers: [{name: spark-kubernetes-driver}]}}`, ``),
	},
	"sparkui-sui011-kubeflow-scheduled": {
		kubeflowScheduled(`concurrencyPolicy: Forbid`, ``),
		kubeflowScheduledWith(`concurrencyPolicy: Forbid`, `, hostNetwork: true, template: {spec: {nodeSelector: {pool: spark}}}`, ``),
	},
	"sparkui-sui011-apache": {
		apacheApp("v1beta1", ``),
		`apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: empty, namespace: analytics}
`,
		apacheApp("v1", `
  driverSpec: {podTemplateSpec: {metadata: {labels: {team: data}}}}`),
		apacheApp("v1", `
  driverSpec: {podTemplateSpec: {spec: {hostNetwork: true}}}`),
	},
	"sparkui-sui011-sparkconnect": {
		sparkConnect(`
      metadata: {labels: {team: data}}`),
		sparkConnect(`
      spec:
        containers: [{name: spark-kubernetes-driver, image: spark:4.0.1, ports: [{name: spark-connect, containerPort: 15002}]}]`),
	},
	"sparkui-sui011-stackable": {
		stackableApp(``, ``),
		stackableApp(``, `
  driver: null`),
		stackableApp(``, `
  driver: {podOverrides: {metadata: {labels: {team: data}}}}`),
		stackableApp(``, `
  driver:
    podOverrides:
      spec:
        hostNetwork: true
        containers: [{name: spark, env: [{name: TZ, value: UTC}]}]`),
	},
	"sparkui-sui031-stackable": {stackableApp(`spark.ui.port: "4050"`, ``)},
	"sparkui-sui061-binder-role": {
		// What transform/rbac.go writes.
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`),
		// Order and a repeated verb grant nothing more.
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [patch, get, get]`),
		// Not labelled as sparkui's: the user's own Role, which the policy does not select.
		`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pi-extra, namespace: analytics}
rules:
- apiGroups: [""]
  resources: [services]
  verbs: [get, patch, delete]
`,
	},
	"sparkui-sui034-stackable": {stackableApp(`spark.executor.memory: 1g`, ``)},
}

func kubeflowApp(kind, extra string) string { return kubeflowAppWith(kind, "", extra) }

// kubeflowAppWith: driver continues the driver's flow mapping.
func kubeflowAppWith(kind, driver, extra string) string {
	return `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ` + kind + `
metadata: {name: pi, namespace: analytics}
spec:
  type: Scala
  mode: cluster
  image: spark:3.5.5
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  sparkVersion: 3.5.5
  driver: {cores: 1, memory: 512m, serviceAccount: pi-driver` + driver + `}
  executor: {cores: 1, instances: 1, memory: 512m}` + extra + "\n"
}

func kubeflowScheduled(policy, conf string) string { return kubeflowScheduledWith(policy, "", conf) }

func kubeflowScheduledWith(policy, driver, conf string) string {
	return `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi-nightly, namespace: analytics}
spec:
  schedule: "@every 1h"
  ` + policy + `
  template:
    type: Scala
    mode: cluster
    image: spark:3.5.5
    mainClass: org.apache.spark.examples.SparkPi
    mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
    sparkVersion: 3.5.5
    driver: {cores: 1, memory: 512m` + driver + `}
    executor: {cores: 1, instances: 1, memory: 512m}` + conf + "\n"
}

// sparkConnect: template is the server's pod template, under spec.server.template.
func sparkConnect(template string) string {
	return `apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: spark-connect, namespace: analytics}
spec:
  sparkVersion: 4.0.1
  server:
    template:` + template + `
  executor: {instances: 1, cores: 1, memory: 512m}
`
}

// stackableApp: conf is one sparkConf entry ("" none), extra more of the spec.
func stackableApp(conf, extra string) string {
	if conf != "" {
		conf = "\n  sparkConf: {" + conf + "}"
	}
	return `apiVersion: spark.stackable.tech/v1alpha1
kind: SparkApplication
metadata: {name: pyspark-pi, namespace: analytics}
spec:
  mode: cluster
  sparkImage: {productVersion: 3.5.6}
  mainApplicationFile: local:///stackable/spark/examples/src/main/python/pi.py` + conf + extra + "\n"
}

// binderRole is a Role labelled as sparkui's binder Role with rules ("" none).
func binderRole(rules string) string {
	if rules == "" {
		rules = " []"
	}
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pi-ui-svc-binder
  namespace: analytics
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-0123456789abcdef}
rules:` + rules + "\n"
}

func apacheApp(version, extra string) string {
	return `apiVersion: spark.apache.org/` + version + `
kind: SparkApplication
metadata: {name: pi, namespace: analytics}
spec:
  mainClass: org.apache.spark.examples.SparkPi
  jars: local:///opt/spark/examples/jars/spark-examples.jar
  runtimeVersions: {sparkVersion: 4.1.1}` + extra + "\n"
}

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

// unseenByAdmission are the rules whose finding may rest on objects next to the one judged,
// which a policy never sees: SUI061 checks a Role's resourceNames against its application's
// UI Service when the input holds the application (validate/sui061.go, Notes), and the
// policy only that it names one UI Service.
var unseenByAdmission = []string{"SUI061"}

// aloneWhereUnseen is want (the rules the function reports for obj in its input) with each
// rule of unseenByAdmission reported as the function reports it for obj on its own: what the
// rule's policy, which sees one object, must match.
func aloneWhereUnseen(t *testing.T, obj *yaml.RNode, doc string, want map[string]bool) map[string]bool {
	if obj.GetKind() != "Role" {
		return want
	}
	alone := functionReports(t, doc)
	out := maps.Clone(want)
	if out == nil {
		out = map[string]bool{}
	}
	for _, id := range unseenByAdmission {
		delete(out, id)
		if alone[id] {
			out[id] = true
		}
	}
	return out
}

// functionReports are the rules `sparkui-fn validate` reports for the objects of manifest.
func functionReports(t *testing.T, manifest string) map[string]bool {
	t.Helper()
	cmd := exec.Command("bin/sparkui-fn", "validate", "--output", "json", "-")
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(manifest)
	out, _ := cmd.Output() // exit status 1 when it reports an error or a warning
	var rep struct {
		Results []struct {
			Rule string `json:"rule"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("sparkui-fn validate: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, r := range rep.Results {
		got[r.Rule] = true
	}
	return got
}

// matches: policy name of rule r would look at obj (its resource, and the rule's scope).
func matches(t *testing.T, c *testcluster.Cluster, obj *unstructured.Unstructured, r validate.Rule, name string) bool {
	m, err := c.Mapping(obj)
	if err != nil {
		return false
	}
	for _, p := range r.Admission {
		if policy.Name(r.ID, p) != name || p.Group != m.Resource.Group {
			continue
		}
		okV, okR := false, false
		for _, v := range p.Versions {
			okV = okV || v == m.Resource.Version
		}
		for _, res := range p.Resources {
			okR = okR || res == m.Resource.Resource
		}
		if !okV || !okR {
			continue
		}
		for k, v := range p.ObjectLabels {
			if obj.GetLabels()[k] != v {
				return false
			}
		}
		return true
	}
	return false
}

// readSource reads the objects of a file (a ResourceList's items, or a plain stream) and
// the rules the function reports per object ("Kind ns/name" → rule ids): from a results
// file (a ResourceList's results or a list of results), or, for plain output,
// `sparkui-fn validate --output json` on it.
func readSource(t *testing.T, itemsPath, resultsPath string) ([]*yaml.RNode, map[string]map[string]bool) {
	t.Helper()
	src, err := os.ReadFile(itemsPath)
	if err != nil {
		t.Fatal(err)
	}
	var items []*yaml.RNode
	if rl, err := yaml.Parse(string(src)); err == nil && rl.YNode().Kind == yaml.MappingNode && rl.GetKind() == "ResourceList" {
		if its, _ := rl.Pipe(yaml.Lookup("items")); its != nil {
			items, _ = its.Elements()
		}
	} else if items, err = (&kio.ByteReader{Reader: strings.NewReader(string(src)), OmitReaderAnnotations: true}).Read(); err != nil {
		t.Fatalf("%s: %v", itemsPath, err)
	}
	want := map[string]map[string]bool{}
	add := func(rule, kind, ns, name string) {
		key := kind + " " + ns + "/" + name
		if want[key] == nil {
			want[key] = map[string]bool{}
		}
		want[key][rule] = true
	}
	if resultsPath == "" {
		cmd := exec.Command("bin/sparkui-fn", "validate", "--output", "json", itemsPath[len("../"):])
		cmd.Dir = root
		out, _ := cmd.Output()
		var rep struct {
			Results []struct {
				Rule        string `json:"rule"`
				ResourceRef struct{ Kind, Name, Namespace string }
			} `json:"results"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("sparkui-fn validate %s: %v", itemsPath, err)
		}
		for _, r := range rep.Results {
			add(r.Rule, r.ResourceRef.Kind, r.ResourceRef.Namespace, r.ResourceRef.Name)
		}
		return items, want
	}
	rsrc, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	rn, err := yaml.Parse(string(rsrc))
	if err != nil {
		t.Fatalf("%s: %v", resultsPath, err)
	}
	if rn.YNode().Kind == yaml.MappingNode && rn.GetKind() == "ResourceList" {
		rn, _ = rn.Pipe(yaml.Lookup("results"))
	}
	if rn == nil {
		return items, want
	}
	results, _ := rn.Elements()
	for _, r := range results {
		rule, _ := r.GetString("tags.rule")
		kind, _ := r.GetString("resourceRef.kind")
		ns, _ := r.GetString("resourceRef.namespace")
		name, _ := r.GetString("resourceRef.name")
		add(rule, kind, ns, name)
	}
	return items, want
}
