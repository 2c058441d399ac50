package examples_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/validate"
	"github.com/sparkui/sparkui/validate/policy"
)

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
