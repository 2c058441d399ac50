package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// FuzzValidate runs validate mode on arbitrary YAML, both ways users reach it:
//   - as the KRM function (ConfigMap mode: validate): no panic, no error but results, every
//     item left exactly as it was (deep comparison of the node trees);
//   - as `sparkui-fn validate - --output …`: no panic, exit 0, 1 or 2; 2 only with a reason
//     on stderr and nothing on stdout; otherwise every format parses, the formats agree on
//     the number of findings, and the exit status is 1 exactly when one is an error.
func FuzzValidate(f *testing.F) {
	ins, _ := filepath.Glob("../validate/testdata/*/input.yaml")
	for _, in := range ins {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(plainDocs(b))
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {labels: {spark-role: driver}}\nspec: {containers: [{ports: [{containerPort: 0}]}]}"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: x, annotations: 3}, spec: {ports: [{port: 0}]}}"))
	f.Add([]byte("---\n# only a comment\n---\nkind: ClusterRole\naggregationRule: {clusterRoleSelectors: [{matchLabels: {a: b}}]}\nmetadata: {labels: {a: b}}\n"))
	f.Add([]byte("a: [1, {b: *x}]"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nkind: Service\nmetadata: {name: x}\n"))
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - port: 80\n    port: 0\n"))
	f.Add([]byte("base: &b {port: 1}\nkind: Service\nspec: {ports: [{<<: *b, port: 2, port: 3}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer failIfHung("FuzzValidate", 10*time.Second, data)()
		fuzzKRMValidate(t, data)
		fuzzValidateCommand(t, data)
	})
}

// plainDocs is a ResourceList fixture's items as multi-document YAML.
func plainDocs(rl []byte) []byte {
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(rl), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return rl
	}
	var docs []string
	for _, it := range items {
		docs = append(docs, it.MustString())
	}
	return []byte(strings.Join(docs, "---\n"))
}

func fuzzKRMValidate(t *testing.T, data []byte) {
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return
	}
	before := make([]*yaml.Node, len(items))
	for i, it := range items {
		before[i] = deepCopy(it.YNode())
	}
	rl := &framework.ResourceList{Items: items,
		FunctionConfig: yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata: {mode: validate}\n")}
	if err := function.Process(rl); err != nil {
		t.Fatalf("Process returned an error instead of results: %v", err)
	}
	if len(rl.Items) != len(before) {
		t.Fatalf("validate mode wrote %d items for %d", len(rl.Items), len(before))
	}
	for i, it := range rl.Items {
		if it != items[i] || !sameTree(before[i], it.YNode()) {
			t.Fatalf("validate mode changed item %d", i)
		}
	}
	for _, res := range rl.Results {
		if res.Tags["rule"] == "" || !strings.HasPrefix(res.Message, "["+res.Tags["rule"]+"] ") {
			t.Fatalf("untagged result: %+v", res)
		}
	}
}

func fuzzValidateCommand(t *testing.T, data []byte) {
	outputs := map[string]string{}
	var code0 int
	for i, format := range []string{"json", "text", "sarif", "junit"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"validate", "-", "--output", format}, bytes.NewReader(data), &stdout, &stderr)
		switch {
		case code == 2:
			if stdout.Len() != 0 || stderr.Len() == 0 {
				t.Fatalf("%s: exit 2 with stdout %q, stderr %q", format, stdout.String(), stderr.String())
			}
		case code != 0 && code != 1:
			t.Fatalf("%s: exit %d", format, code)
		}
		if i == 0 {
			code0 = code
		} else if code != code0 {
			t.Fatalf("exit %d with json, %d with %s", code0, code, format)
		}
		outputs[format] = stdout.String()
	}
	if code0 == 2 {
		return
	}
	var js struct {
		Results []struct {
			Severity string `json:"severity"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(outputs["json"]), &js); err != nil {
		t.Fatalf("json output: %v\n%s", err, outputs["json"])
	}
	errs := 0
	for _, r := range js.Results {
		if r.Severity == "error" {
			errs++
		}
	}
	if (errs > 0) != (code0 == 1) {
		t.Fatalf("exit %d with %d error findings", code0, errs)
	}
	if n := strings.Count(outputs["text"], "\n"); n != len(js.Results) {
		t.Fatalf("%d text lines for %d findings:\n%s", n, len(js.Results), outputs["text"])
	}
	var sarif struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(outputs["sarif"]), &sarif); err != nil || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) != len(js.Results) {
		t.Fatalf("sarif output (%v):\n%s", err, outputs["sarif"])
	}
	var junit junitDoc
	if err := xml.Unmarshal([]byte(outputs["junit"]), &junit); err != nil {
		t.Fatalf("junit output: %v\n%s", err, outputs["junit"])
	}
	if (junit.Failures > 0) != (errs > 0) {
		t.Fatalf("junit: %d failures for %d error findings", junit.Failures, errs)
	}
}

func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = deepCopy(k)
	}
	c.Alias = nil // aliases point into the tree; their target is compared where it sits
	return &c
}

func sameTree(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Style != b.Style || a.Anchor != b.Anchor ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameTree(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
