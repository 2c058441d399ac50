package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// helmRendered is what Helm 4 writes to a post-renderer: every document annotated with the
// template it came from (helm.sh/helm/v4 pkg/action/action.go, annotateAndMerge).
const helmRendered = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: spark-pi-driver
  namespace: spark-jobs
  annotations:
    postrenderer.helm.sh/postrender-filename: 'spark-jobs/templates/serviceaccount.yaml'
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
  namespace: spark-jobs
  annotations:
    postrenderer.helm.sh/postrender-filename: 'spark-jobs/templates/sparkapplication.yaml'
spec:
  type: Scala
  mode: cluster
  image: spark:3.5.5
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.5.jar
  sparkVersion: 3.5.5
  sparkConf:
    spark.ui.port: "4045"
  driver:
    serviceAccount: spark-pi-driver
  executor:
    instances: 1
`

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sparkui.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const nodePortConfig = `apiVersion: sparkui.dev/v1alpha1
kind: SparkUIService
metadata:
  name: sparkui
spec:
  service:
    type: NodePort
`

// TestHelmPostRendererIsStandalone: with a config, the post-renderer's stdout is exactly
// standalone mode's (`sparkui-fn CONFIG.yaml -`), without one exactly the plain stream's; Helm's
// filename annotations stay on the objects it sent, and the output is a fixed point.
func TestHelmPostRendererIsStandalone(t *testing.T) {
	cfg := writeConfig(t, nodePortConfig)
	for _, c := range []struct {
		name       string
		args, same []string
		want       string
	}{
		{"config", []string{helmPostRenderer, cfg}, []string{cfg, "-"}, "type: NodePort"},
		{"defaults", []string{helmPostRenderer}, nil, "name: spark-pi-sparkui-ui-svc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got, want, stderr bytes.Buffer
			if code := run(c.args, strings.NewReader(helmRendered), &got, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if code := run(c.same, strings.NewReader(helmRendered), &want, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if d := cmp.Diff(want.String(), got.String()); d != "" {
				t.Errorf("post-renderer output differs from sparkui-fn %v (-want +got):\n%s", c.same, d)
			}
			for _, s := range []string{c.want, "postrenderer.helm.sh/postrender-filename: 'spark-jobs/templates/sparkapplication.yaml'",
				"name: spark-pi-sparkui-ui-svc-binder", "name: sparkui-runtime"} {
				if !strings.Contains(got.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, got.String())
				}
			}
			var again bytes.Buffer
			if code := run(c.args, bytes.NewReader(got.Bytes()), &again, &stderr); code != 0 {
				t.Fatalf("second run: exit %d: %s", code, stderr.String())
			}
			if d := cmp.Diff(got.String(), again.String()); d != "" {
				t.Errorf("not idempotent (-first +second):\n%s", d)
			}
		})
	}
}

// TestHelmPostRendererRefuses: a bad functionConfig is an error naming the field (SUI014), exit
// 1; bad arguments exit 2 with one line; an empty input (a chart rendering no object) gives an
// empty output for Helm to report, and an input that is no YAML stream is refused.
func TestHelmPostRendererRefuses(t *testing.T) {
	bad := writeConfig(t, strings.Replace(nodePortConfig, "NodePort", "Internal", 1))
	for _, c := range []struct {
		name   string
		args   []string
		in     string
		code   int
		stderr string
		stdout bool
	}{
		{"bad config", []string{helmPostRenderer, bad}, helmRendered, 1,
			`[SUI014] invalid functionConfig: spec.service.type: value must be one of "ClusterIP", "NodePort", "LoadBalancer"`, true},
		{"missing config", []string{helmPostRenderer, filepath.Join(t.TempDir(), "none.yaml")}, helmRendered, 1, "none.yaml: no such file", false},
		{"manifests as config", []string{helmPostRenderer, writeConfig(t, helmRendered)}, helmRendered, 1, "which sparkui-fn reads as its functionConfig", false},
		{"two args", []string{helmPostRenderer, bad, bad}, helmRendered, 2, "takes one functionConfig file, got 2 arguments", false},
		{"flag", []string{helmPostRenderer, "--output=json"}, helmRendered, 2, "unknown flag --output=json", false},
		{"empty", []string{helmPostRenderer}, "", 0, "", false},
		{"not yaml", []string{helmPostRenderer}, "a: [\n", 1, "standard input", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, strings.NewReader(c.in), &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.stderr) || (stdout.Len() > 0) != c.stdout {
				t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit %d, stdout written %t, stderr with %q",
					code, stdout.Len(), stderr.String(), c.code, c.stdout, c.stderr)
			}
			if c.code == 2 && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("a usage error is one line: %q", stderr.String())
			}
		})
	}
}
