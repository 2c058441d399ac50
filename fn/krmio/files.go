package krmio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/yamlx"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The input of `sparkui-fn validate`: files, directories (every *.yaml and *.yml below) and
// standard input, all within one budget, read with each object's file and line for the report.

// FilesReader is validate's kio.Reader: every object of Paths ("-": Stdin, named StdinName),
// annotated with its file and index (kustomize's and kpt's annotations) so the function's
// results name them, and screened (Held).
type FilesReader struct {
	Paths     []string
	Stdin     io.Reader
	StdinName string
	Budget    *inputlimit.Budget

	// Set by Read: the files read, in order; those skipped (not regular files); every object,
	// Docs[i] being the i-th item; the items held.
	Files   []string
	Skipped []Source
	Docs    []*Document
	Held    *Held
}

var _ kio.Reader = &FilesReader{}

// Read reads every input.
func (r *FilesReader) Read() ([]*yaml.RNode, error) {
	srcs, err := Sources(r.Paths, r.Stdin, r.StdinName, r.Budget)
	if err != nil {
		return nil, err
	}
	var items []*yaml.RNode
	for _, s := range srcs {
		if s.Skipped != "" {
			r.Skipped = append(r.Skipped, s)
			continue
		}
		docs, err := ParseDocuments(s.Name, s.Data)
		if err != nil {
			return nil, err
		}
		r.Files = append(r.Files, s.Name)
		for _, d := range docs {
			Annotate(d)
			r.Docs = append(r.Docs, d)
			items = append(items, yaml.NewRNode(d.Node))
		}
	}
	r.Held = Screen(items)
	return items, nil
}

// Source is one file of the input, or standard input.
type Source struct {
	Name string
	Data []byte
	// Skipped says why a file found in a directory was not read (a named pipe, a device);
	// Data is then nil.
	Skipped string
}

// Sources reads files, directories (recursively, *.yaml and *.yml) and "-" (stdin),
// all together within budget.
func Sources(paths []string, stdin io.Reader, stdinName string, budget *inputlimit.Budget) ([]Source, error) {
	var out []Source
	seen := map[string]bool{}
	add := func(name string, data []byte) {
		if !seen[name] {
			seen[name] = true
			out = append(out, Source{Name: name, Data: data})
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
					out = append(out, Source{Name: filepath.Clean(path), Skipped: fileType(st.Mode())})
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

// Document is one object of validate's input: its mapping node (aliases resolved) and where
// it was read.
type Document struct {
	Node                  *yaml.Node
	File                  string
	Index, Line           int // its position in File (from 0) and its first line
	Kind, Namespace, Name string
}

// ParseDocuments reads a multi-document YAML stream, keeping each object's line. A v1 List
// (what kubectl get -o yaml prints) or a ResourceList that is the whole stream is unwrapped
// into its items.
func ParseDocuments(name string, data []byte) (objs []*Document, err error) {
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
		objs = append(objs, &Document{Node: n, File: name, Index: len(objs), Line: n.Line,
			Kind: yamlx.GetStr(n, "kind"), Namespace: ns, Name: nm})
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

func parseJSONStream(name string, docs []yamlx.JSONDoc) ([]*Document, error) {
	var objs []*Document
	for _, d := range docs {
		part, err := ParseDocuments(name, d.Text)
		if err != nil {
			return nil, err
		}
		for _, o := range part {
			shiftLines(o.Node, d.Line-1)
			o.Line = o.Node.Line
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

// Annotate records where an object was read the way kustomize and kpt do, so the function's
// results name its file and index. An object whose metadata is not a mapping is left alone.
func Annotate(o *Document) {
	md := yamlx.Get(o.Node, "metadata")
	if md != nil && md.Kind != yaml.MappingNode {
		return
	}
	if md == nil {
		md = yamlx.Ensure(o.Node, "metadata")
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
