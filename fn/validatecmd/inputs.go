package validatecmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/validate/report"
)

// object is one object of the input: what the report says about it, and its YAML.
type object struct {
	*report.Object
	node *yaml.Node // its mapping node
}

// newObject is the report's view of a document krmio read.
func newObject(d *krmio.Document) *object {
	return &object{node: d.Node, Object: &report.Object{File: d.File, Index: d.Index, Line: d.Line,
		Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}}
}

// loadConfig is the functionConfig: the user's (--config) with its mode forced to validate, or
// a ConfigMap that says only that.
func loadConfig(path string) (*yaml.RNode, *object, error) {
	if path == "" {
		return yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sparkui-validate\ndata:\n  mode: validate\n"), nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	docs, err := krmio.ParseDocuments(filepath.Clean(path), b)
	if err != nil {
		return nil, nil, err
	}
	if len(docs) != 1 {
		return nil, nil, fmt.Errorf("--config %s: want one functionConfig document, found %d", path, len(docs))
	}
	n := docs[0].Node
	av, kind := yamlx.GetStr(n, "apiVersion"), yamlx.GetStr(n, "kind")
	switch {
	case av == "v1" && kind == "ConfigMap":
		yamlx.Set(yamlx.Ensure(n, "data"), "mode", yamlx.NewStr("validate"))
	case strings.HasPrefix(av, names.ConfigGroup+"/") || kind == names.ConfigKind:
		yamlx.Set(yamlx.Ensure(n, "spec"), "mode", yamlx.NewStr("validate"))
	}
	krmio.Annotate(docs[0])
	return yaml.NewRNode(n), newObject(docs[0]), nil
}

// fieldLine is the line of a field path in n: of the deepest part of it that exists in the
// file. Nodes without a line are not in the file: the path annotations read() adds to
// metadata.annotations, where the file may have none.
func fieldLine(n *yaml.Node, path string) int {
	line := n.Line
	cur := n
	for _, seg := range fieldpath.Parse(path) {
		var next *yaml.Node
		if seg.Index >= 0 {
			if cur.Kind == yaml.SequenceNode && seg.Index < len(cur.Content) {
				next = cur.Content[seg.Index]
				if next.Line > 0 {
					line = next.Line
				}
			}
		} else if cur.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == seg.Key {
					next = cur.Content[i+1]
					if l := cur.Content[i].Line; l > 0 {
						line = l
					}
					break
				}
			}
		}
		if next == nil {
			break
		}
		cur = next
	}
	return line
}
