package validatecmd

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

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

type source struct {
	name string
	data []byte
}

// collectSources reads files, directories (recursively, *.yaml and *.yml) and "-" (stdin).
func collectSources(paths []string, stdin io.Reader, stdinName string) ([]source, error) {
	var out []source
	seen := map[string]bool{}
	add := func(name string, data []byte) {
		if !seen[name] {
			seen[name] = true
			out = append(out, source{name, data})
		}
	}
	for _, p := range paths {
		if p == "-" {
			if seen[stdinName] {
				continue
			}
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading standard input: %w", err)
			}
			add(stdinName, b)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			add(filepath.Clean(p), b)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			add(filepath.Clean(path), b)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseObjects reads a multi-document YAML stream, keeping each object's line. A v1 List (what
// kubectl get -o yaml prints) or a ResourceList is unwrapped into its items.
func parseObjects(name string, data []byte) (objs []*object, err error) {
	defer func() {
		if p := recover(); p != nil {
			objs, err = nil, fmt.Errorf("%s: the YAML parser failed: %v", name, p)
		}
	}()
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	dec := yaml.NewDecoder(strings.NewReader(text))
	add := func(n *yaml.Node, doc int) error {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: document %d is not a mapping (a Kubernetes object)", name, n.Line, doc)
		}
		ns, nm := yamlx.GetStr(n, "metadata", "namespace"), yamlx.GetStr(n, "metadata", "name")
		objs = append(objs, &object{node: n, Object: &report.Object{File: name, Index: len(objs), Line: n.Line,
			Kind: yamlx.GetStr(n, "kind"), Namespace: ns, Name: nm}})
		return nil
	}
	for doc := 1; ; doc++ {
		var d yaml.Node
		if err := dec.Decode(&d); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if d.Kind != yaml.DocumentNode || len(d.Content) == 0 {
			continue
		}
		n := d.Content[0]
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue // an empty document
		}
		// Rules read plain mappings: resolve aliases and merge keys (<<: *base) as kustomize
		// does. The copies keep the lines of what they copy.
		if err := yaml.NewRNode(n).DeAnchor(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n.Line, err)
		}
		if isList(n) {
			for _, it := range yamlx.Items(yamlx.Get(n, "items")) {
				if err := add(it, doc); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := add(n, doc); err != nil {
			return nil, err
		}
	}
}

func isList(n *yaml.Node) bool {
	kind := yamlx.GetStr(n, "kind")
	items := yamlx.Get(n, "items")
	return (kind == "List" || kind == "ResourceList") && items != nil && items.Kind == yaml.SequenceNode
}

// annotate records where an object was read the way kustomize and kpt do, so the function's
// results name its file and index. An object whose metadata is not a mapping is left alone.
func annotate(o *object) {
	md := yamlx.Get(o.node, "metadata")
	if md != nil && md.Kind != yaml.MappingNode {
		return
	}
	if md == nil {
		md = yamlx.Ensure(o.node, "metadata")
	}
	ann := yamlx.Get(md, "annotations")
	if ann != nil && ann.Kind != yaml.MappingNode {
		return
	}
	if ann == nil {
		ann = yamlx.Ensure(md, "annotations")
	}
	yamlx.Set(ann, kioutil.PathAnnotation, yamlx.NewStr(o.File))
	yamlx.Set(ann, kioutil.IndexAnnotation, yamlx.NewStr(strconv.Itoa(o.Index)))
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
	objs, err := parseObjects(filepath.Clean(path), b)
	if err != nil {
		return nil, nil, err
	}
	if len(objs) != 1 {
		return nil, nil, fmt.Errorf("--config %s: want one functionConfig document, found %d", path, len(objs))
	}
	o := objs[0]
	n := o.node
	av, kind := yamlx.GetStr(n, "apiVersion"), yamlx.GetStr(n, "kind")
	switch {
	case av == "v1" && kind == "ConfigMap":
		yamlx.Set(yamlx.Ensure(n, "data"), "mode", yamlx.NewStr("validate"))
	case strings.HasPrefix(av, names.ConfigGroup+"/") || kind == names.ConfigKind:
		yamlx.Set(yamlx.Ensure(n, "spec"), "mode", yamlx.NewStr("validate"))
	}
	annotate(o)
	return yaml.NewRNode(n), o, nil
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
