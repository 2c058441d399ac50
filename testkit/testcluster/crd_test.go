package testcluster

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// crdDir holds the kubeflow and Apache operators' CRDs (see its SOURCE).
const crdDir = "../../testdata/assets/crds"

// crdCluster is a control plane with the operators' CRDs installed; no controller manager:
// dry runs need none.
func crdCluster(t *testing.T) *Cluster {
	t.Helper()
	// The operators' CRDs, and the Stackable CRD written for the tests (its SOURCE says how).
	return Shared(t, Options{CRDDirectoryPaths: []string{crdDir, "../../testdata/assets/crds-stackable"}})
}

// documents splits a multi-document YAML file.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range strings.Split("\n"+string(b), "\n---\n") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func TestCRDsInstalled(t *testing.T) {
	c := crdCluster(t)
	var got []string
	for _, crd := range c.Env.CRDs {
		got = append(got, crd.Name)
	}
	sort.Strings(got)
	want := "scheduledsparkapplications.sparkoperator.k8s.io sparkapplications.spark.apache.org sparkapplications.spark.stackable.tech sparkapplications.sparkoperator.k8s.io sparkconnects.sparkoperator.k8s.io"
	if strings.Join(got, " ") != want {
		t.Errorf("installed CRDs %v, want %s", got, want)
	}
}

// TestDryRunCarrierFixtures: every object of the carrier fixtures (kubeflow SparkApplication,
// ScheduledSparkApplication and SparkConnect, Apache v1 and v1beta1, Stackable, the driver workloads) is accepted by
// a server-side dry run with strict field validation against the real schemas (Stackable: the CRD written from its facts).
func TestDryRunCarrierFixtures(t *testing.T) {
	c := crdCluster(t)
	files, err := filepath.Glob("../../testdata/assets/carriers/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("carrier fixtures: %v, %v", files, err)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		for i, doc := range documents(t, f) {
			obj, err := DecodeYAML(doc)
			if err != nil {
				t.Fatalf("%s #%d: %v", f, i, err)
			}
			kinds[obj.GetAPIVersion()+" "+obj.GetKind()] = true
			if err := c.DryRunCreate(Context(t, 60*time.Second), obj); err != nil {
				t.Errorf("%s #%d (%s %s) rejected: %v", filepath.Base(f), i, obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	for _, k := range []string{
		"sparkoperator.k8s.io/v1beta2 SparkApplication", "sparkoperator.k8s.io/v1beta2 ScheduledSparkApplication",
		"sparkoperator.k8s.io/v1alpha1 SparkConnect", "spark.apache.org/v1 SparkApplication", "spark.apache.org/v1beta1 SparkApplication",
		"spark.stackable.tech/v1alpha1 SparkApplication",
		"apps/v1 StatefulSet", "apps/v1 Deployment", "batch/v1 Job", "batch/v1 CronJob",
	} {
		if !kinds[k] {
			t.Errorf("no fixture of %s", k)
		}
	}
}

// TestDryRunStrictOnOperatorSchemas shows the dry run is discriminating on the operators'
// schemas: unknown fields are refused (400) where the schema is typed, kept inside
// kubeflow's preserve-unknown-fields pod template, and v1-only fields refused at v1beta1.
func TestDryRunStrictOnOperatorSchemas(t *testing.T) {
	c := crdCluster(t)
	const kubeflow = `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: strict-check}
spec:
  type: Scala
  mode: cluster
  mainApplicationFile: local:///x.jar
  sparkVersion: 3.5.5
  driver: {serviceAccount: spark, template: {spec: {initContainers: [{name: a, image: b, restartPolicy: Always}]}}}
  executor: {instances: 1}
`
	const apache = `apiVersion: spark.apache.org/VERSION
kind: SparkApplication
metadata: {name: strict-check}
spec:
  mainClass: x.Main
  runtimeVersions: {sparkVersion: 4.0.1}
`
	// SparkConnect (v1alpha1): typed but for the server and executor templates, which are
	// preserve-unknown-fields (api/v1alpha1/sparkconnect_types.go SparkPodSpec.Template).
	const connect = `apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: strict-check}
spec:
  sparkVersion: 4.0.1
  server: {service: {metadata: {name: x}}, template: {spec: {initContainers: [{name: a, image: b, restartPolicy: Always}]}}}
  executor: {instances: 1}
`
	tests := []struct {
		name, doc string
		ok        bool
		field     string // the field the rejection names
	}{
		{"sparkconnect as written", connect, true, ""},
		{"sparkconnect misspelled server field", strings.Replace(connect, "service:", "servce:", 1), false, `unknown field "spec.server.servce"`},
		{"sparkconnect unknown field inside the template is kept", strings.Replace(connect, "restartPolicy: Always", "restartPolicy: Always, bogus: 1", 1), true, ""},
		{"sparkconnect without executor", strings.Replace(connect, "  executor: {instances: 1}\n", "", 1), false, "spec.executor: Required value"},
		{"kubeflow as written", kubeflow, true, ""},
		{"kubeflow misspelled driver field", strings.Replace(kubeflow, "serviceAccount:", "serviceAcount:", 1), false, `unknown field "spec.driver.serviceAcount"`},
		{"kubeflow unknown field inside the template is kept", strings.Replace(kubeflow, "restartPolicy: Always", "restartPolicy: Always, bogus: 1", 1), true, ""},
		{"kubeflow sparkConf as a list", strings.Replace(kubeflow, "  executor:", "  sparkConf: [a]\n  executor:", 1), false, "spec.sparkConf in body must be of type object"},
		{"apache v1", strings.Replace(apache, "VERSION", "v1", 1), true, ""},
		{"apache v1beta1", strings.Replace(apache, "VERSION", "v1beta1", 1), true, ""},
		{"apache v1 ttlAfterStopMillis", strings.Replace(apache, "VERSION", "v1", 1) + "  applicationTolerations: {ttlAfterStopMillis: 1}\n", true, ""},
		{"apache v1beta1 refuses v1-only ttlAfterStopMillis", strings.Replace(apache, "VERSION", "v1beta1", 1) + "  applicationTolerations: {ttlAfterStopMillis: 1}\n", false, `unknown field "spec.applicationTolerations.ttlAfterStopMillis"`},
		{"apache native sidecar in the template", strings.Replace(apache, "VERSION", "v1beta1", 1) +
			"  driverSpec: {podTemplateSpec: {spec: {initContainers: [{name: a, image: b, restartPolicy: Always}]}}}\n", true, ""},
		{"apache unknown field in the template", strings.Replace(apache, "VERSION", "v1", 1) +
			"  driverSpec: {podTemplateSpec: {spec: {initContainers: [{name: a, image: b, bogus: 1}]}}}\n", false,
			`unknown field "spec.driverSpec.podTemplateSpec.spec.initContainers[0].bogus"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.DryRunCreateYAML(Context(t, 60*time.Second), []byte(tc.doc))
			switch {
			case tc.ok && err != nil:
				t.Errorf("rejected: %v", err)
			case !tc.ok && err == nil:
				t.Errorf("accepted")
			case !tc.ok && (!apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field)):
				t.Errorf("rejected for another reason than %s: %v", tc.field, err)
			}
		})
	}
}

func TestCheckCRDPaths(t *testing.T) {
	empty := t.TempDir()
	withFile := t.TempDir()
	if err := os.WriteFile(filepath.Join(withFile, "x.yml"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		paths []string
		err   string
	}{
		{"none", nil, ""},
		{"the project's", []string{crdDir}, ""},
		{"a file", []string{filepath.Join(crdDir, "sparkoperator.k8s.io_sparkapplications.yaml")}, ""},
		{"a .yml", []string{withFile}, ""},
		{"missing", []string{filepath.Join(empty, "nope")}, "testcluster: CRD path: stat " + filepath.Join(empty, "nope") + ": no such file or directory"},
		{"empty", []string{crdDir, empty}, "testcluster: no CustomResourceDefinition file (.yaml, .yml, .json) in " + empty},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCRDPaths(tc.paths)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("checkCRDPaths = %q, want %q", got, tc.err)
			}
		})
	}
	// The check runs before anything starts (no binaries needed to see it fail).
	if _, err := startIn(t.TempDir(), Options{CRDDirectoryPaths: []string{empty}}); err == nil || !strings.Contains(err.Error(), "no CustomResourceDefinition file") {
		t.Errorf("startIn with an empty CRD directory: %v", err)
	}
}
