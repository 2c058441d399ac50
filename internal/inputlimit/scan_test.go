package inputlimit

import (
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// parsedNodes is what CountNodes estimates: the nodes yaml.v3 builds, documents left out.
func parsedNodes(t *testing.T, in string) int64 {
	t.Helper()
	var count func(n *yaml.Node) int64
	count = func(n *yaml.Node) int64 {
		c := int64(1)
		for _, k := range n.Content {
			c += count(k)
		}
		return c
	}
	dec := yaml.NewDecoder(strings.NewReader(in))
	var total int64
	for {
		var d yaml.Node
		if err := dec.Decode(&d); err == io.EOF {
			return total
		} else if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		total += count(&d) - 1
	}
}

// TestCountNodes: the estimate against yaml.v3's own count. Exact where the text says how many
// nodes there are (mappings, flow and JSON, block and quoted scalars whatever they hold); one
// too many for each scalar entry of a block sequence, never fewer than the parser builds.
func TestCountNodes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		extra    int64 // how far above the parser's count
	}{
		{"mapping", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: y}\n", 0},
		{"block scalar", "data:\n  dashboard.json: |\n    {\"a\": [1, 2, 3], \"b\": {\"c\": \"d: e\"}}\n    - not: an entry\n\n    # not a comment\n  other: >-\n    folded\n    text\nnext: 1\n", 0},
		{"block scalar in a sequence", "- |\n  a: b\n  c: d\n- x: y\n", 1},
		{"quoted", "a: \"x, y: [z] # w\"\nb: 'it''s: {x}'\nc: \"multi\n  line, still one\"\n", 0},
		{"plain with colons and hashes", "url: http://a:80/b#c\nk: a#b\n", 0},
		{"comments", "# a: b\na: b # c: d\n  # - e\n", 0},
		{"flow", "a: [1, 2, {b: c, d: [e, f]}]\ng: {}\n", 0},
		{"JSON", `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"x,y:{z}","b":"\"q\""},"n":[1,2.5,true,null]}`, 1},
		{"anchors and aliases", "a: &x {b: c}\nd: *x\ne: !!str 5\n", 0},
		{"documents", "---\na: b\n---\nc: d\n...\n---\ne: [f]\n", 0},
		{"sequence of mappings", "items:\n- name: a\n  value: b\n- name: c\n", 0},
		{"sequence of scalars", "args:\n- a\n- b\n- c\n", 3},
		{"ResourceList", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n    k: |\n      x: y\n      - z\n", 0},
	} {
		got, want := CountNodes([]byte(tc.in)), parsedNodes(t, tc.in)+tc.extra
		if got != want {
			t.Errorf("%s: CountNodes = %d, want %d (yaml.v3 builds %d)", tc.name, got, want, want-tc.extra)
		}
	}
}
