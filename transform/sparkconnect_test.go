package transform

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

// TestSparkConnectNothingInServerContainer: the operator replaces the server container's
// lifecycle (kubeflow/spark-operator internal/controller/sparkconnect/reconciler.go
// mutateServerPod), so sparkui writes nothing there, takes out a withdraw hook and mount
// found there, and makes up no container for a template that has none (the operator adds
// spark-kubernetes-driver itself); the sidecar, its volume and the identity label go into the
// template. A second run changes nothing.
func TestSparkConnectNothingInServerContainer(t *testing.T) {
	for name, tc := range map[string]struct{ doc, containers string }{
		"no template": {`apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: sc, namespace: ns}
spec: {sparkVersion: 4.0.1, image: apache/spark:4.0.1}
`, ""},
		"hook and mount found in the server container": {`apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: sc, namespace: ns}
spec:
  sparkVersion: 4.0.1
  server:
    template:
      spec:
        containers:
        - name: spark-kubernetes-driver
          volumeMounts: [{name: sparkui-runtime, mountPath: /opt/sparkui, readOnly: true}]
          lifecycle: {preStop: {exec: {command: [/opt/sparkui/sparkui-runtime, withdraw, --socket=/opt/sparkui/runtime.sock, --timeout=10s]}}}
`, "- name: spark-kubernetes-driver\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var first string
			for run := 1; run <= 2; run++ {
				doc := tc.doc
				if run == 2 {
					doc = first
				}
				m, items := build(t, doc, app.InjectTemplate)
				a := m.Apps[0]
				inject(t, a, Options{RuntimeImage: "img"})
				out := items[0]
				if run == 2 {
					if got := str(t, out); got != first {
						t.Fatalf("second run changed\n%s\ninto\n%s", first, got)
					}
					return
				}
				first = str(t, out)
				get := func(path ...string) *yaml.RNode {
					n, err := out.Pipe(yaml.Lookup(append([]string{"spec", "server", "template"}, path...)...))
					if err != nil {
						t.Fatal(err)
					}
					return n
				}
				got := ""
				if cs := get("spec", "containers"); cs != nil {
					got = str(t, cs)
				}
				if got != tc.containers {
					t.Errorf("containers\n%s\nwant\n%s", got, tc.containers)
				}
				if n := get("spec", "initContainers", "[name=sparkui-runtime]"); n == nil || len(n.YNode().Content) == 0 {
					t.Errorf("no runtime sidecar:\n%s", first)
				}
				if n := get("spec", "volumes", "[name=sparkui-runtime]"); n == nil {
					t.Errorf("no runtime volume:\n%s", first)
				}
				if n := get("metadata", "labels", "sparkui.dev/application"); n == nil || n.YNode().Value != "sc" {
					t.Errorf("no identity label:\n%s", first)
				}
			}
		})
	}
}
