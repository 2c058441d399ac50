package main

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// plainFromResourceList turns a ResourceList fixture into the plain stream of its items (each
// item a document of its own, so each keeps the anchors it defines).
func plainFromResourceList(t *testing.T, rl []byte) []byte {
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
	return []byte(out.String())
}

// objectsByName reads sparkui-fn's output (a ResourceList or a plain stream) by kind/name.
func objectsByName(t *testing.T, out []byte) map[string]*yaml.RNode {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("reading output: %v\n%s", err, out)
	}
	m := map[string]*yaml.RNode{}
	for _, it := range items {
		m[it.GetKind()+"/"+it.GetName()] = it
	}
	return m
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || (n.Kind == yaml.ScalarNode && n.Value == "<<" && n.ShortTag() == yaml.MergeTag) {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

func mustParse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	rn, err := yaml.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return rn.YNode()
}

// TestAliasesResolved: a driver that shares its node, its template or its volumeMounts with
// the executor through a YAML anchor, and a driver whose template comes from a merge key, are
// rewritten as YAML readers resolve them: sparkui's additions reach the driver only, the
// merged fields (nodeSelector, tolerations, serviceAccount) are kept, the rewritten objects
// carry no alias, an object sparkui does not change keeps its aliases byte for byte, and a
// second run changes nothing. Through a ResourceList on stdin and a plain stream.
func TestAliasesResolved(t *testing.T) {
	rl := readFixture(t, "aliases")
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"ResourceList", rl}, {"plain stream", plainFromResourceList(t, rl)}} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(nil, bytes.NewReader(tc.in), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			out := stdout.Bytes()
			objs := objectsByName(t, out)
			get := func(obj string, path ...string) *yaml.Node {
				t.Helper()
				o := objs[obj]
				if o == nil {
					t.Fatalf("no %s in the output:\n%s", obj, out)
				}
				return yamlx.Get(o.YNode(), path...)
			}
			for _, c := range []struct {
				obj  string
				path []string
				want string
			}{
				{"SparkApplication/shared-pod", []string{"spec", "executor"}, "serviceAccount: spark\ntemplate: {spec: {nodeSelector: {disk: ssd}}}"},
				{"SparkApplication/shared-template", []string{"spec", "executor", "template"}, "metadata: {labels: {team: fraud}}\nspec: {nodeSelector: {disk: ssd}}"},
				{"SparkApplication/shared-template", []string{"spec", "driver", "template", "metadata", "labels"}, "{team: fraud, sparkui.dev/application: shared-template}"},
				{"SparkApplication/shared-mounts", []string{"spec", "executor", "template", "spec", "containers"}, "[{name: spark-kubernetes-executor, volumeMounts: [{name: data, mountPath: /data}]}]"},
				{"SparkApplication/merged", []string{"spec", "executor"}, "serviceAccount: spark-merged\ntemplate: {spec: {nodeSelector: {disk: ssd}, tolerations: [{key: dedicated, operator: Exists}]}}"},
				{"SparkApplication/merged", []string{"spec", "driver", "serviceAccount"}, "spark-merged"},
				{"SparkApplication/merged", []string{"spec", "driver", "cores"}, "1"},
				{"SparkApplication/merged", []string{"spec", "driver", "template", "spec", "nodeSelector"}, "{disk: ssd}"},
				{"SparkApplication/merged", []string{"spec", "driver", "template", "spec", "tolerations"}, "[{key: dedicated, operator: Exists}]"},
				{"RoleBinding/merged-sparkui-ui-svc-binder", []string{"subjects"}, "[{kind: ServiceAccount, name: spark-merged, namespace: analytics}]"},
			} {
				if got := get(c.obj, c.path...); !yamlx.Equal(got, mustParse(t, c.want)) {
					s, _ := yaml.String(got)
					t.Errorf("%s %s = %s, want %s", c.obj, strings.Join(c.path, "."), s, c.want)
				}
			}
			for _, obj := range []string{"SparkApplication/shared-pod", "SparkApplication/shared-template", "SparkApplication/shared-mounts", "SparkApplication/merged"} {
				ctr := yamlx.Items(get(obj, "spec", "driver", "template", "spec", "containers"))
				if len(ctr) != 1 {
					t.Fatalf("%s: %d driver containers", obj, len(ctr))
				}
				if mounts := yamlx.Items(yamlx.Get(ctr[0], "volumeMounts")); len(mounts) == 0 || yamlx.GetStr(mounts[len(mounts)-1], "name") != "sparkui-runtime" {
					t.Errorf("%s: the driver container does not mount the runtime", obj)
				}
				if inits := yamlx.Items(get(obj, "spec", "driver", "template", "spec", "initContainers")); len(inits) != 1 || yamlx.GetStr(inits[0], "name") != "sparkui-runtime" {
					t.Errorf("%s: the driver has no runtime", obj)
				}
				if hasAlias(objs[obj].YNode()) {
					s, _ := objs[obj].String()
					t.Errorf("%s: the rewritten object still has an alias, anchor or merge key:\n%s", obj, s)
				}
			}
			if !bytes.Contains(out, []byte("a: &v hello # kept as written\n")) || !bytes.Contains(out, []byte("b: *v\n")) {
				t.Errorf("the unrelated ConfigMap lost its anchor and alias:\n%s", out)
			}
			var again, stderr2 bytes.Buffer
			if code := run(nil, bytes.NewReader(out), &again, &stderr2); code != 0 || again.String() != string(out) {
				t.Errorf("second run: exit %d, output changed:\n%s", code, again.String())
			}
		})
	}
}
