package validatecmd

import (
	"errors"
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
	"github.com/sparkui/sparkui/internal/inputlimit"
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
	// skipped says why a file found in a directory was not read (a named pipe, a device);
	// data is then nil.
	skipped string
}

// collectSources reads files, directories (recursively, *.yaml and *.yml) and "-" (stdin),
// all together within budget.
func collectSources(paths []string, stdin io.Reader, stdinName string, budget *inputlimit.Budget) ([]source, error) {
	var out []source
	seen := map[string]bool{}
	add := func(name string, data []byte) {
		if !seen[name] {
			seen[name] = true
			out = append(out, source{name: name, data: data})
		}
	}
	for _, p := range paths {
		if p == "-" {
			if seen[stdinName] {
				continue
			}
			b, err := budget.ReadAll(stdinName, stdin)
			if err != nil {
				var tl *inputlimit.TooLarge
				if errors.As(err, &tl) {
					return nil, err
				}
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
			b, err := budget.ReadFile(p)
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
			if kustomizationFiles[d.Name()] {
				return &KustomizationError{Dir: filepath.Dir(filepath.Clean(path)), File: filepath.Clean(path)}
			}
			if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			// Only regular files, followed through symlinks: opening a named pipe blocks until
			// something writes to it, forever in a checkout. A pipe named on the command line
			// (<(kustomize build)) is read, since it was asked for.
			if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
				if !seen[filepath.Clean(path)] {
					seen[filepath.Clean(path)] = true
					out = append(out, source{name: filepath.Clean(path), skipped: fileType(st.Mode())})
				}
				return nil
			}
			b, err := budget.ReadFile(path)
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

// kustomizationFiles are the names kustomize reads a kustomization from
// (sigs.k8s.io/kustomize/api/konfig.RecognizedKustomizationFileNames).
var kustomizationFiles = map[string]bool{"kustomization.yaml": true, "kustomization.yml": true, "Kustomization": true}

// KustomizationError: a directory to validate is (or holds) a kustomization. Its files are
// kustomize's input, not what gets applied: read as they are, its resources, its
// functionConfig and any expected output next to them make no sense together (an
// application seen twice, nothing transformed).
type KustomizationError struct{ Dir, File string }

func (e *KustomizationError) Error() string {
	return fmt.Sprintf("%s is a kustomization (%s): validate what it builds, not its files:\n"+
		"  kustomize build --enable-alpha-plugins --enable-exec %s | sparkui-fn validate --stdin-name %s -", e.Dir, e.File, e.Dir, e.Dir)
}

func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// parseObjects reads a multi-document YAML stream, keeping each object's line. A v1 List (what
// kubectl get -o yaml prints) or a ResourceList that is the whole stream is unwrapped into its
// items.
func parseObjects(name string, data []byte) (objs []*object, err error) {
	defer func() {
		if p := recover(); p != nil {
			objs, err = nil, fmt.Errorf("%s: the YAML parser failed: %v", name, p)
		}
	}()
	if docs, ok := yamlx.JSONStream(data); ok {
		return parseJSONStream(name, docs)
	}
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
	type document struct {
		n   *yaml.Node
		doc int
	}
	var docs []document
	for doc := 1; ; doc++ {
		var d yaml.Node
		if err := dec.Decode(&d); err != nil {
			if err == io.EOF {
				break
			}
			if e := yamlx.CheckStream(data); e != nil {
				return nil, fmt.Errorf("%s: %v", name, e)
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
		// does, within yamlx's bound. The copies keep the lines of what they copy. A document
		// past the bound stays as written: the function reports it (SUI051) and reads no
		// further.
		if err := yamlx.DeAnchor(n); err != nil {
			var ae *yamlx.AliasError
			if !errors.As(err, &ae) {
				return nil, fmt.Errorf("%s:%d: %v", name, n.Line, err)
			}
		}
		docs = append(docs, document{n, doc})
	}
	// A List is unwrapped when it is the whole file, as kyaml's reader does for the function:
	// among other documents it is one object, which the function reports (SUI050).
	if len(docs) == 1 && isList(docs[0].n) {
		for _, it := range yamlx.Items(yamlx.Get(docs[0].n, "items")) {
			if err := add(it, docs[0].doc); err != nil {
				return nil, err
			}
		}
		return objs, nil
	}
	for _, d := range docs {
		if err := add(d.n, d.doc); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

func parseJSONStream(name string, docs []yamlx.JSONDoc) ([]*object, error) {
	var objs []*object
	for _, d := range docs {
		part, err := parseObjects(name, d.Text)
		if err != nil {
			return nil, err
		}
		for _, o := range part {
			shiftLines(o.node, d.Line-1)
			o.Line = o.node.Line
			o.Index = len(objs)
			objs = append(objs, o)
		}
	}
	return objs, nil
}

func shiftLines(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
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
