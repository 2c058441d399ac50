// Package krmio is sparkui-fn's one I/O layer: one kio.Reader (Reader) for every form its
// input takes, and one kio.Writer (Writer) that writes each back in its own form, byte for
// byte as kyaml's writer would, but one YAML document at a time.
//
//   - a ResourceList, or a v1 List, on standard input (kustomize, kpt): written back wrapped;
//   - a plain stream of YAML documents or of JSON values on standard input (`kustomize build |
//     sparkui-fn`): written back plain, without kyaml's reader annotations;
//   - standalone files (`sparkui-fn CONFIG FILE… [-]`): written back plain, kyaml's index
//     annotations cleared, as kyaml's standalone command writes them;
//   - the files, directories and standard input of `sparkui-fn validate` (files.go), read with
//     their lines for the report.
//
// Every reader screens what it read once (Screen): the items sparkui cannot read are held,
// reported, kept from the function and from kyaml's bookkeeping, and written as they came.
package krmio

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Form is the shape of an input, and so of its output.
type Form int

const (
	// ResourceList: a config.kubernetes.io/v1 ResourceList (or any wrapping kyaml reads other
	// than a v1 List) on standard input; written back wrapped, results in it.
	ResourceList Form = iota
	// List: a v1 List on standard input; written back wrapped, results on stderr (a List has
	// no results field).
	List
	// Stream: a plain stream on standard input.
	Stream
	// Files: standalone mode's files (and standard input where "-" is given).
	Files
)

// Reader reads one input of sparkui-fn, whole and within Budget, in any of its forms.
// After Read, Form, FunctionConfig and Held describe it.
type Reader struct {
	// Stdin is standard input; nil when there is none (read as an empty input).
	Stdin io.Reader
	// Args are standalone mode's arguments: the functionConfig file, then the input files, "-"
	// for standard input. Empty: the input is standard input alone.
	Args   []string
	Budget *inputlimit.Budget

	Form           Form
	FunctionConfig *yaml.RNode
	Held           *Held

	wrap  *kio.ByteReadWriter          // a wrapped input: its kind, functionConfig and results
	annos map[string]map[string]string // kyaml's internal annotations, for ReconcileInternalAnnotations
}

var _ kio.Reader = &Reader{}

// Read reads every item. Its errors are the message sparkui-fn prints.
func (r *Reader) Read() ([]*yaml.RNode, error) {
	if len(r.Args) > 0 {
		return r.readFiles()
	}
	var data []byte
	var err error
	if r.Stdin != nil { // none: an empty input
		data, err = r.Budget.ReadAll("standard input", r.Stdin)
	}
	if err != nil {
		var tl *inputlimit.TooLarge
		if errors.As(err, &tl) {
			return nil, err
		}
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	if items, ok := plainStream(data); ok {
		r.Form = Stream
		return r.screened(items), nil
	}
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), KeepReaderAnnotations: true}
	items, rerr := rw.Read()
	if rerr == nil && rw.WrappingKind != "" {
		rw.Reader = nil // the input's bytes, no longer needed while the output is built
		r.Form = ResourceList
		if rw.WrappingKind != kio.ResourceListKind {
			r.Form = List
		}
		return r.wrapped(rw, items)
	}
	if e := yamlx.CheckStream(data); e != nil {
		return nil, fmt.Errorf("standard input, %v", e)
	}
	if rerr != nil {
		return nil, kerrors.WrapPrefixf(rerr, "failed to read ResourceList input")
	}
	// Nothing kyaml reads as an object (an empty input, only "---"): an empty stream.
	r.Form = Stream
	return r.screened(items), nil
}

// readFiles reads standalone mode's input as kyaml's standalone command does: the files
// concatenated in order, standard input first where "-" is given, a List or ResourceList in
// them unwrapped (its functionConfig ignored: the configuration file's counts).
func (r *Reader) readFiles() ([]*yaml.RNode, error) {
	r.Form = Files
	cfg, err := r.Budget.ReadFile(r.Args[0])
	if err != nil {
		return nil, fmt.Errorf("unable to read configuration file %q: %w", r.Args[0], err)
	}
	if r.FunctionConfig, err = yaml.Parse(string(cfg)); err != nil {
		return nil, fmt.Errorf("unable to parse configuration file %q: %w", r.Args[0], err)
	}
	var fromStdin, fromFiles []byte
	readStdin := false
	for _, p := range r.Args[1:] {
		if p == "-" {
			if !readStdin && r.Stdin != nil {
				readStdin = true
				if fromStdin, err = r.Budget.ReadAll("standard input", r.Stdin); err != nil {
					return nil, err
				}
			}
			continue
		}
		b, err := r.Budget.ReadFile(p)
		if err != nil {
			var tl *inputlimit.TooLarge
			if errors.As(err, &tl) {
				return nil, err
			}
			return nil, fmt.Errorf("unable to read input file %s: %w", p, err)
		}
		fromFiles = joinDocuments(fromFiles, b)
	}
	data := joinDocuments(fromStdin, fromFiles)
	if items, ok := plainStream(data); ok {
		return r.screened(items), nil
	}
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), NoWrap: true, FunctionConfig: r.FunctionConfig}
	items, err := rw.Read()
	if err != nil {
		return nil, kerrors.WrapPrefixf(err, "failed to read ResourceList input")
	}
	rw.Reader = nil
	return r.wrapped(rw, items)
}

// joinDocuments appends next to data as documents of their own. kyaml's standalone command
// joins its files byte for byte (kyaml fn/framework/command/command.go, io.MultiReader), so the
// last object of one file without a closing "---" and the first of the next became one mapping
// with every key twice: two ordinary one-object files could not be given together.
func joinDocuments(data, next []byte) []byte {
	if len(bytes.TrimSpace(data)) == 0 {
		return append(data, next...)
	}
	if len(bytes.TrimSpace(next)) == 0 {
		return data
	}
	if data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	return append(append(data, "---\n"...), next...)
}

func (r *Reader) screened(items []*yaml.RNode) []*yaml.RNode {
	r.Held = Screen(items)
	return items
}

// wrapped is what kyaml's framework.Execute does before processing, with the held items kept
// out of its annotation bookkeeping (which fails on them and loses every item).
func (r *Reader) wrapped(rw *kio.ByteReadWriter, items []*yaml.RNode) ([]*yaml.RNode, error) {
	r.wrap = rw
	r.FunctionConfig = rw.FunctionConfig
	r.screened(items)
	annos, err := kio.PreprocessResourcesForInternalAnnotationMigration(r.Held.Readable(items))
	if err != nil {
		return nil, err
	}
	r.annos = annos
	return items, nil
}

// ResultsInOutput says whether the output carries the results (a ResourceList's results
// field): otherwise every result goes to stderr, the only place left for them.
func (r *Reader) ResultsInOutput() bool { return r.Form == ResourceList }

// plainStream reads data when it is a plain multi-document stream (`kustomize build … |
// sparkui-fn`) rather than a ResourceList. kyaml's reader annotates every object of such a
// stream with config.kubernetes.io/index and internal.config.kubernetes.io/index and its writer
// keeps them, so they would reach what is then applied; this reads without them. ok is
// false for a ResourceList or List, for no object, and for input kyaml cannot read.
func plainStream(data []byte) (items []*yaml.RNode, ok bool) {
	if docs, ok := yamlx.JSONStream(data); ok {
		// One document per JSON value: JSON is YAML, and each stays a flow mapping.
		parts := make([][]byte, len(docs))
		for i, d := range docs {
			parts[i] = d.Text
		}
		data = bytes.Join(parts, []byte("\n---\n"))
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil || r.WrappingKind != "" || len(items) == 0 {
		return nil, false
	}
	return items, true
}

// IsStream reports whether Reader reads data, on standard input, as a plain stream.
func IsStream(data []byte) bool {
	_, ok := plainStream(data)
	return ok
}
