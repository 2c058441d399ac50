package examples_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExamples(t *testing.T) {
	if os.Getenv("UPDATE_EXPECTED") == "1" {
		*update = true
	}
	if err := readInputs(); err != nil {
		t.Fatal(err)
	}
	fn := filepath.Join(root, "bin", "sparkui-fn")

	// make example: sparkui-fn in standalone mode (config file, then input files).
	t.Run("spark-submit", func(t *testing.T) {
		const dir = "examples/spark-submit"
		out := run(t, "", nil, "bin/sparkui-fn", dir+"/fn-config.yaml", dir+"/manifests.yaml")
		checkExpected(t, dir, out)

		// Idempotency through the same path: standalone sparkui-fn on its own output.
		again := filepath.Join(t.TempDir(), "output.yaml")
		write(t, again, string(out))
		sameOutput(t, "bin/sparkui-fn on its own output", out, run(t, "", nil, "bin/sparkui-fn", dir+"/fn-config.yaml", again))
	})

	// kustomize build with sparkui-fn as an exec transformer: one kustomization, a dual-stack
	// NodePort one, an overlay (namespace + namePrefix) over a base of three applications,
	// kubeflow SparkApplication + ScheduledSparkApplication (template injection), and driver
	// workloads (StatefulSet, Deployment, Job, CronJob).
	for _, ex := range []struct{ dir, kustomization string }{
		{"examples/kustomize", "examples/kustomize"},
		{"examples/dualstack-nodeport", "examples/dualstack-nodeport"},
		{"examples/multi-app", "examples/multi-app/overlays/prod"},
		{"examples/kubeflow", "examples/kubeflow"},
		{"examples/workloads", "examples/workloads"},
		{"examples/route-httproute", "examples/route-httproute"},
		{"examples/route-grpc", "examples/route-grpc"},
		{"examples/stackable-operator", "examples/stackable-operator"},
	} {
		t.Run(strings.TrimPrefix(ex.dir, "examples/"), func(t *testing.T) {
			kustomizeExample(t, fn, ex.dir, ex.kustomization)
		})
	}

	// sparkui-fn validate in pre-merge CI: raw spark-submit output fails with exit 1 and the
	// expected text and SARIF; the kustomize example's output passes with exit 0.
	t.Run("pre-merge-ci", func(t *testing.T) {
		const dir = "examples/pre-merge-ci"
		for _, c := range []struct{ format, file string }{{"text", "expected-spark-submit.txt"}, {"sarif", "expected-spark-submit.sarif"}} {
			cmd := exec.Command("bin/sparkui-fn", "validate", "examples/spark-submit/manifests.yaml", "--output", c.format)
			cmd.Dir = root
			out, err := cmd.Output()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("validate --output %s: want exit 1, got %v", c.format, err)
			}
			path := filepath.Join(root, dir, c.file)
			if *update {
				write(t, path, string(out))
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(out)); d != "" {
				t.Errorf("%s differs (-want +got):\n%s", c.file, d)
			}
		}
		built := run(t, "", nil, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", "examples/kustomize")
		run(t, "", built, "bin/sparkui-fn", "validate", "-")

		// The gate notices when the function never ran: kustomize without --enable-exec skips
		// the exec transformer and exits 0 with the untransformed input.
		skipped := run(t, "", nil, kustomizeBin(t), "build", "--enable-alpha-plugins", "examples/kubeflow")
		code, out, _ := runExit(t, skipped, "bin/sparkui-fn", "validate", "-")
		if code != 1 {
			t.Errorf("validate on a build that skipped the function: exit %d, want 1\n%s", code, out)
		}
		for _, app := range []string{"SparkApplication spark-jobs/spark-pi", "ScheduledSparkApplication spark-jobs/nightly-pi"} {
			if !strings.Contains(out, "[SUI060] sparkui-fn has not transformed this application: "+app) ||
				!strings.Contains(out, "--enable-alpha-plugins --enable-exec") {
				t.Errorf("no SUI060 naming %s and the kustomize flags:\n%s", app, out)
			}
		}
		// Advice names only Services that exist: the operator's own, never sparkui's absent one.
		if strings.Contains(out, "use spark-pi-sparkui-ui-svc") || strings.Contains(out, "use nightly-pi-sparkui-ui-svc") {
			t.Errorf("a finding sends the user to a UI Service that is not in the input:\n%s", out)
		}

		// Nothing to validate is no pass: a pipeline whose first command failed without
		// pipefail feeds validate nothing.
		if code, out, errOut := runExit(t, []byte{}, "bin/sparkui-fn", "validate", "-"); code != 2 || out != "" ||
			!strings.Contains(errOut, "no objects in stdin") || !strings.Contains(errOut, "set -o pipefail") {
			t.Errorf("validate on empty input: exit %d, stdout %q, stderr %q; want exit 2 and why", code, out, errOut)
		}
		// A kustomization directory is kustomize's input: build it first.
		if code, _, errOut := runExit(t, nil, "bin/sparkui-fn", "validate", "examples/kubeflow"); code != 2 ||
			!strings.Contains(errOut, "examples/kubeflow is a kustomization (examples/kubeflow/kustomization.yaml)") ||
			!strings.Contains(errOut, "kustomize build --enable-alpha-plugins --enable-exec examples/kubeflow | sparkui-fn validate") {
			t.Errorf("validate on a kustomization directory: exit %d, stderr %q", code, errOut)
		}
	})

	// kpt fn eval --exec, functionConfig from key=value arguments (a ConfigMap): spark-submit
	// output with serviceType=NodePort, and a kubeflow SparkApplication on the webhook injection.
	for _, ex := range []struct{ dir, config, namespace, prefix string }{
		{"examples/kpt-imperative", "serviceType=NodePort", "reporting", "daily-report-7c2e9a4b1d8f3e60"},
		{"examples/kubeflow-webhook", "kubeflowInjection=webhook", "etl", "events-etl-sparkui"},
	} {
		t.Run(strings.TrimPrefix(ex.dir, "examples/"), func(t *testing.T) {
			kptEvalExample(t, ex.dir, ex.config, ex.namespace, ex.prefix)
		})
	}
	// The deprecated key kubeflowRoute still works through kpt: the same output as
	// kubeflowInjection, the exit code 0, and kpt shows the warning that names the new key.
	t.Run("kubeflow-webhook/deprecated-kubeflowRoute", func(t *testing.T) {
		code, out, errOut := runExit(t, nil, kptBin(t), "fn", "eval", "examples/kubeflow-webhook", "--exec", "bin/sparkui-fn", "--output", "unwrap", "--", "kubeflowRoute=webhook")
		want, err := os.ReadFile(filepath.Join(root, "examples/kubeflow-webhook/expected.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || out != string(want) {
			t.Errorf("kubeflowRoute=webhook: exit %d, output differs from kubeflowInjection=webhook's expected.yaml (-want +got):\n%s\nstderr:\n%s", code, cmp.Diff(lines(want), lines([]byte(out))), errOut)
		}
		const warning = "[SUI014] deprecated functionConfig field: data.kubeflowRoute: renamed data.kubeflowInjection"
		if !strings.Contains(errOut, warning) {
			t.Errorf("kpt's stderr lacks the deprecation warning %q:\n%s", warning, errOut)
		}
	})

	// kpt fn render with the function in the Kptfile pipeline (exec, a mutator and a
	// validator): spark-submit output with a TLS UI, and an Apache SparkApplication.
	for _, ex := range []struct{ dir, namespace, prefix string }{
		{"examples/kpt-declarative", "risk", "fraud-scoring-2b7d4f9e0c1a6e35"},
		{"examples/apache-operator", "analytics", "word-count-sparkui"},
		{"examples/route-ingress", "analytics", "word-count-sparkui"},
		{"examples/route-openshift", "spark-jobs", "spark-pi-sparkui"},
	} {
		t.Run(strings.TrimPrefix(ex.dir, "examples/"), func(t *testing.T) {
			kptRenderExample(t, ex.dir, ex.namespace, ex.prefix)
		})
	}
}

// kptEvalExample runs kpt fn eval --exec on the package dir with one key=value config,
// compares with dir/expected.yaml, and proves idempotency through kpt twice over:
//  1. the printed output, fed back to kpt fn eval on stdin, prints the same bytes;
//  2. in place, as users run it: a second eval of the written package (which now holds the
//     added objects in files kpt named <namespace>/<kind>_<prefix>-….yaml) changes no file.
func kptEvalExample(t *testing.T, dir, config, namespace, prefix string) {
	kpt := kptBin(t)
	args := []string{"--exec", "bin/sparkui-fn", "--output", "unwrap", "--", config}
	before := snapshot(t, filepath.Join(root, dir))
	out := run(t, "", nil, kpt, append([]string{"fn", "eval", dir}, args...)...)
	sameTree(t, "kpt fn eval --output unwrap", before, snapshot(t, filepath.Join(root, dir)))
	checkExpected(t, dir, out)

	sameOutput(t, "kpt fn eval - on the first output", out,
		run(t, "", out, kpt, append([]string{"fn", "eval", "-"}, args...)...))
	pkg := copyPackage(t, dir)
	inPlace := []string{"fn", "eval", pkg, "--exec", "bin/sparkui-fn", "--", config}
	run(t, "", nil, kpt, inPlace...)
	first := snapshot(t, pkg)
	addedFiles(t, first, namespace, prefix)
	run(t, "", nil, kpt, inPlace...)
	sameTree(t, "a second in-place kpt fn eval", first, snapshot(t, pkg))
	if d := cmp.Diff(documents(out), documents(run(t, "", nil, kpt, "fn", "eval", pkg, "--exec", "bin/sparkui-fn", "--output", "unwrap", "--", config))); d != "" {
		t.Errorf("the package evaluated in place holds other objects than expected.yaml (-expected +in place):\n%s", d)
	}
}

// kptRenderExample runs kpt fn render on the package dir (its Kptfile pipeline), compares
// with dir/expected.yaml, and proves idempotency through kpt fn render, in place as users
// run it (the Kptfile's exec path is relative to the directory kpt runs in, so kpt still
// runs at the root): a second render of the rendered package changes no file, and the
// rendered package holds exactly the objects of expected.yaml (kpt orders a package by file
// path, and the added objects now live in files of their own, so only the order differs).
func kptRenderExample(t *testing.T, dir, namespace, prefix string) {
	kpt := kptBin(t)
	before := snapshot(t, filepath.Join(root, dir))
	out := run(t, "", nil, kpt, "fn", "render", dir, "--allow-exec", "--output", "unwrap")
	sameTree(t, "kpt fn render --output unwrap", before, snapshot(t, filepath.Join(root, dir)))
	checkExpected(t, dir, out)

	pkg := copyPackage(t, dir)
	run(t, "", nil, kpt, "fn", "render", pkg, "--allow-exec")
	first := snapshot(t, pkg)
	addedFiles(t, first, namespace, prefix)
	run(t, "", nil, kpt, "fn", "render", pkg, "--allow-exec")
	sameTree(t, "a second in-place kpt fn render", first, snapshot(t, pkg))
	if d := cmp.Diff(documents(out), documents(run(t, "", nil, kpt, "fn", "render", pkg, "--allow-exec", "--output", "unwrap"))); d != "" {
		t.Errorf("the package rendered in place holds other objects than expected.yaml (-expected +in place):\n%s", d)
	}
}

// kustomizeExample builds the kustomization with the kustomize CLI, compares with
// dir/expected.yaml, and proves idempotency through kustomize: a kustomization whose only
// resource is the first build's output, with the same transformer (its exec path made
// absolute, since the temporary directory is elsewhere), must build to the same bytes. That
// second build runs kustomize in process (krustyBuild): the CLI has just built this very
// example, and the library spares a kustomize process per example (BenchmarkKustomizeBuild).
func kustomizeExample(t *testing.T, fn, dir, kustomization string) {
	kustomize := kustomizeBin(t)
	out := run(t, "", nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", kustomization)
	checkExpected(t, dir, out)

	tmp := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(root, kustomization, "sparkui.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rel := "path: " + strings.Repeat("../", strings.Count(kustomization, "/")+1) + "bin/sparkui-fn"
	if !bytes.Contains(cfg, []byte(rel)) {
		t.Fatalf("%s/sparkui.yaml no longer holds %q", kustomization, rel)
	}
	write(t, filepath.Join(tmp, "sparkui.yaml"), strings.Replace(string(cfg), rel, "path: "+fn, 1))
	write(t, filepath.Join(tmp, "built.yaml"), string(out))
	write(t, filepath.Join(tmp, "kustomization.yaml"), "resources:\n- built.yaml\ntransformers:\n- sparkui.yaml\n")
	sameOutput(t, "kustomize build (in process) on the first build's output", out, krustyBuild(t, tmp))
}
