package examples_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// TestKptAliases runs the real kpt (kpt fn eval --exec) on a package whose SparkApplications
// share the driver with the executor through YAML anchors and take the driver's template
// from a merge key (the objects of testdata/aliases): the runtime reaches the driver only,
// the executor keeps what it had, the merged nodeSelector, tolerations and serviceAccount
// reach the driver, and a second in-place run changes no file.
func TestKptAliases(t *testing.T) {
	kpt := kptBin(t)
	fn := filepath.Join(root, "bin", "sparkui-fn")
	rl, err := os.ReadFile(filepath.Join(root, "testdata", "aliases", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := t.TempDir()
	write(t, filepath.Join(pkg, "apps.yaml"), itemsAsDocuments(t, rl))

	checkAliasOutput(t, "kpt fn eval --output unwrap", run(t, "", nil, kpt, "fn", "eval", pkg, "--exec", fn, "--output", "unwrap"))

	run(t, "", nil, kpt, "fn", "eval", pkg, "--exec", fn)
	first := snapshot(t, pkg)
	apps, ok := first["apps.yaml"]
	if !ok {
		t.Fatalf("the in-place run left no apps.yaml: %v", first)
	}
	checkAliasOutput(t, "apps.yaml after kpt fn eval in place", []byte(apps))
	run(t, "", nil, kpt, "fn", "eval", pkg, "--exec", fn)
	sameTree(t, "a second in-place kpt fn eval", first, snapshot(t, pkg))
}

// itemsAsDocuments is a ResourceList fixture's items as a multi-document file, each item a
// document of its own (so each keeps the anchors it defines).
func itemsAsDocuments(t *testing.T, rl []byte) string {
	t.Helper()
	_, items, ok := strings.Cut(string(rl), "\nitems:\n")
	if !ok {
		t.Fatal("no items")
	}
	var out strings.Builder
	for i, line := range strings.Split(strings.TrimRight(items, "\n"), "\n") {
		if strings.HasPrefix(line, "- ") {
			if i > 0 {
				out.WriteString("---\n")
			}
			line = "  " + line[2:]
		}
		out.WriteString(strings.TrimPrefix(line, "  ") + "\n")
	}
	return out.String()
}

func checkAliasOutput(t *testing.T, what string, out []byte) {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	objs := map[string]*yaml.Node{}
	for _, it := range items {
		objs[it.GetName()] = it.YNode()
	}
	equal := func(name string, path []string, want string) {
		t.Helper()
		w, err := yaml.Parse(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := yamlx.Get(objs[name], path...); !yamlx.Equal(got, w.YNode()) {
			s, _ := yaml.String(got)
			t.Errorf("%s: %s %s = %s, want %s", what, name, strings.Join(path, "."), s, want)
		}
	}
	equal("shared-pod", []string{"spec", "executor"}, "serviceAccount: spark\ntemplate: {spec: {nodeSelector: {disk: ssd}}}")
	equal("shared-template", []string{"spec", "executor", "template"}, "metadata: {labels: {team: fraud}}\nspec: {nodeSelector: {disk: ssd}}")
	equal("shared-mounts", []string{"spec", "executor", "template", "spec", "containers"}, "[{name: spark-kubernetes-executor, volumeMounts: [{name: data, mountPath: /data}]}]")
	equal("merged", []string{"spec", "executor"}, "serviceAccount: spark-merged\ntemplate: {spec: {nodeSelector: {disk: ssd}, tolerations: [{key: dedicated, operator: Exists}]}}")
	equal("merged", []string{"spec", "driver", "serviceAccount"}, "spark-merged")
	equal("merged", []string{"spec", "driver", "template", "spec", "nodeSelector"}, "{disk: ssd}")
	equal("merged", []string{"spec", "driver", "template", "spec", "tolerations"}, "[{key: dedicated, operator: Exists}]")
	for _, name := range []string{"shared-pod", "shared-template", "shared-mounts", "merged"} {
		inits := yamlx.Items(yamlx.Get(objs[name], "spec", "driver", "template", "spec", "initContainers"))
		if len(inits) != 1 || yamlx.GetStr(inits[0], "name") != "sparkui-runtime" {
			t.Errorf("%s: %s's driver has no runtime", what, name)
		}
	}
	if !bytes.Contains(out, []byte("a: &v hello # kept as written\n")) || !bytes.Contains(out, []byte("b: *v\n")) {
		t.Errorf("%s: the unrelated ConfigMap lost its anchor and alias:\n%s", what, out)
	}
}
