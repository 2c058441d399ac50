package inputlimit

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
		{"anchors and aliases", "a: &x {b: c}\nd: *x\ne: !!str 5\nf: &y # a mapping below\n  g: h\ni: !!map\n  j: k\n", 0},
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

// TestCountNodesOnTheRepository: on every YAML file of the repository that yaml.v3 reads (the
// fixtures: anchors, JSON lines, comments, block scalars, operators' resources, Helm output),
// the estimate is never below the parser's count, and within half above it (a list of short
// scalars, e.g. the catalog's tags, counts each twice).
func TestCountNodesOnTheRepository(t *testing.T) {
	files := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "../.." {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return err
		}
		if ext := filepath.Ext(path); d.IsDir() || ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || !parses(data) {
			return nil
		}
		files++
		got, want := CountNodes(data), parsedNodes(t, string(data))
		if got < want || got > want+want/2+2 {
			t.Errorf("%s: CountNodes = %d, yaml.v3 builds %d", path, got, want)
		}
		return nil
	})
	if err != nil || files < 200 {
		t.Fatalf("%d files checked: %v", files, err)
	}
}

func parses(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var d yaml.Node
		if err := dec.Decode(&d); err == io.EOF {
			return true
		} else if err != nil {
			return false
		}
	}
}
