package operatortest

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestStackableDriverTemplate: podOverrides merged over the operator's template as
// k8s-openapi's DeepMerge does — the container "spark" merged by name (its image kept, env
// merged by name, a mount added), init containers and volumes appended, a label added, the
// ServiceAccount replaced.
func TestStackableDriverTemplate(t *testing.T) {
	app := yaml.MustParse(`apiVersion: spark.stackable.tech/v1alpha1
kind: SparkApplication
metadata: {name: pi, namespace: ns}
spec:
  sparkImage: {productVersion: 3.5.6}
  driver:
    podOverrides:
      metadata:
        labels: {sparkui.dev/application: pi}
      spec:
        serviceAccountName: own
        initContainers: [{name: sparkui-runtime, image: rt}]
        volumes: [{name: sparkui-runtime, emptyDir: {}}]
        containers:
        - name: spark
          env: [{name: A, value: "1"}]
          volumeMounts: [{name: sparkui-runtime, mountPath: /sparkui}]
`)
	tmpl, image, err := StackableDriverTemplate(app)
	if err != nil {
		t.Fatal(err)
	}
	if image != "oci.stackable.tech/sdp/spark-k8s:3.5.6-stackable0.0.0-dev" {
		t.Errorf("image %s", image)
	}
	want := `metadata:
  labels:
    app.kubernetes.io/name: spark-k8s
    app.kubernetes.io/instance: pi
    app.kubernetes.io/component: spark
    app.kubernetes.io/managed-by: spark.stackable.tech_sparkapplication
    prometheus.io/scrape: "true"
    sparkui.dev/application: pi
spec:
  serviceAccountName: own
  securityContext: {fsGroup: 1000}
  containers:
  - name: spark
    image: oci.stackable.tech/sdp/spark-k8s:3.5.6-stackable0.0.0-dev
    env: [{name: A, value: "1"}]
    volumeMounts: [{name: sparkui-runtime, mountPath: /sparkui}]
  initContainers: [{name: sparkui-runtime, image: rt}]
  volumes: [{name: sparkui-runtime, emptyDir: {}}]
`
	if got := tmpl.MustString(); got != want {
		t.Errorf("template:\n%s\nwant:\n%s", got, want)
	}
	// A second override of the same container by name merges into it, not beside it.
	dst := yaml.MustParse("containers: [{name: spark, env: [{name: A, value: '1'}]}]")
	MergeOverrides(dst.YNode(), yaml.MustParse("containers: [{name: spark, env: [{name: A, value: '2'}, {name: B, value: '3'}]}]").YNode(), "")
	if got := dst.MustString(); got != "containers: [{name: spark, env: [{name: A, value: '2'}, {name: B, value: '3'}]}]\n" {
		t.Errorf("merged by name: %s", got)
	}
	if _, _, err := StackableDriverTemplate(yaml.MustParse("kind: SparkApplication\nmetadata: {name: x}\nspec: {}\n")); err == nil {
		t.Error("no spec.sparkImage.productVersion: no error")
	}
}
