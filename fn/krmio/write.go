package krmio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Writer writes the items back in the form Reader read them in, into memory: the caller
// writes Bytes in one piece, so a failure never leaves half a document on stdout.
type Writer struct {
	Reader *Reader
	// Results are the function's findings: in the output of a ResourceList only
	// (Reader.ResultsInOutput).
	Results framework.Results

	buf bytes.Buffer
}

var _ kio.Writer = &Writer{}

// Bytes is what Write wrote.
func (w *Writer) Bytes() []byte { return w.buf.Bytes() }

// Write encodes items. The results go into the output's results field only for a
// ResourceList: that field is the ResourceList's (kustomize
// cmd/config/docs/api-conventions/functions-spec.md, apiVersion v1: a function reads and
// writes a ResourceList, whose results field carries its findings). A v1 List, which kyaml's
// reader also accepts, has no such field: kyaml's writer adds it anyway
// (kio/byteio_writer.go writes Results whatever the wrapping kind), which strict schema checks
// of a List refuse.
func (w *Writer) Write(items []*yaml.RNode) error {
	r := w.Reader
	if r.wrap != nil {
		if err := kio.ReconcileInternalAnnotations(r.Held.Readable(items), r.annos); err != nil {
			return err
		}
	}
	if r.Form == Files {
		for _, it := range items {
			if r.Held.Has(it) {
				continue
			}
			// The annotations kio.ByteWriter clears without KeepReaderAnnotations, the legacy
			// one included: an object carrying it in the input loses it in kyaml's standalone
			// output.
			//lint:ignore SA1019 cleared exactly as kyaml's writer clears it
			for _, a := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation} {
				if _, err := it.Pipe(yaml.ClearAnnotation(a)); err != nil {
					return err
				}
			}
		}
	}
	if r.Form == Stream || r.Form == Files {
		out, err := encodeItems(items, r.Held)
		w.buf.Write(out)
		return err
	}
	if len(w.Results) > 0 && r.ResultsInOutput() {
		// framework.Execute marshals and parses the results as one sequence, which holds one
		// document's emitter events at once; one result at a time gives the same nodes.
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, res := range w.Results {
			b, err := yaml.Marshal(res)
			if err != nil {
				return err
			}
			y, err := yaml.Parse(string(b))
			if err != nil {
				return err
			}
			seq.Content = append(seq.Content, y.YNode())
		}
		r.wrap.Results = yaml.NewRNode(seq)
	}
	return writeWrapped(&w.buf, r.wrap, items, r.Held)
}

// encodeItems writes a plain stream's items as kyaml's ByteWriter does with
// KeepReaderAnnotations (the writer the plain path used), except that an item sparkui cannot read
// (Held: metadata or annotations that are no mapping, an alias bomb) is
// written exactly as it came: ByteWriter indexes metadata.annotations as a mapping, which
// panics on a list and drops a scalar. Everything is encoded into memory first; the caller
// writes it in one piece, so a failure never leaves half a document on stdout.
func encodeItems(items []*yaml.RNode, held *Held) ([]byte, error) {
	var buf bytes.Buffer
	readable := make([]bool, len(items))
	seqIndent := make([]string, len(items))
	for i, it := range items {
		if held.Has(it) {
			continue
		}
		readable[i] = true
		seqIndent[i] = it.GetAnnotations()[kioutil.SeqIndentAnnotation]
		if err := yaml.ClearEmptyAnnotations(it); err != nil {
			return nil, err
		}
	}
	if len(items) == 1 && readable[0] && isJSONFile(items[0]) {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err := enc.Encode(items[0])
		return buf.Bytes(), err
	}
	// One encoder per document: yaml.v3's emitter appends every event to one slice for the
	// encoder's whole life (go.yaml.in/yaml/v3 emitterc.go, yaml_emitter_emit), so a single
	// encoder over the stream held every event of every object, about 600 bytes per scalar:
	// 3.3 GB of peak RSS for 5,000 kubeflow applications (4.7 MB in). An encoder writes the
	// separator only before its second document, hence the "---" written here.
	for i, it := range items {
		if i > 0 {
			buf.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&buf)
		if seqIndent[i] == string(yaml.WideSequenceStyle) {
			enc.DefaultSeqIndent()
		} else {
			enc.CompactSeqIndent()
		}
		if err := enc.Encode(unwrapBareSeq(it.Document())); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

func isJSONFile(it *yaml.RNode) bool {
	path, _, _ := kioutil.GetFileAnnotations(it)
	if path == "" {
		return false
	}
	for _, glob := range kio.JSONMatch {
		if ok, _ := filepath.Match(glob, filepath.Base(path)); ok {
			return true
		}
	}
	return false
}

// unwrapBareSeq undoes kyaml's wrapping of a bare sequence document.
func unwrapBareSeq(n *yaml.Node) *yaml.Node {
	if seq, err := yaml.NewRNode(n).Pipe(yaml.Lookup(yaml.BareSeqNodeWrappingKey)); err == nil && !seq.IsNilOrEmpty() {
		return seq.YNode()
	}
	return n
}

// writeWrapped writes items wrapped in rw's list kind with its functionConfig and results,
// byte for byte as kio.ByteWriter does with KeepReaderAnnotations, but one top-level field,
// and one element of a sequence, per YAML document: the emitter's events then never outlive
// one item. An element is encoded under its field's key, so the emitter is in the same state
// as in the whole list, and the key's line is cut from all but the first element.
// Why: ByteWriter copies every item and encodes the whole list as one YAML document, and
// yaml.v3's emitter keeps every event of a document in one slice until the document ends
// (go.yaml.in/yaml/v3 emitterc.go, yaml_emitter_emit): about 300 bytes per scalar, so writing
// 5,000 kubeflow applications (27 MB of YAML) held over a gigabyte. The bytes are the same.
// It cleans the items themselves of empty annotations, where ByteWriter cleans copies:
// nothing reads them after this.
func writeWrapped(w io.Writer, rw *kio.ByteReadWriter, items []*yaml.RNode, held *Held) error {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, it := range items {
		// An item sparkui cannot read is written exactly as it came (see encodeItems).
		if !held.Has(it) {
			if err := yaml.ClearEmptyAnnotations(it); err != nil {
				return err
			}
		}
		seq.Content = append(seq.Content, it.YNode())
	}
	fields := []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "apiVersion"}, {Kind: yaml.ScalarNode, Value: rw.WrappingAPIVersion},
		{Kind: yaml.ScalarNode, Value: "kind"}, {Kind: yaml.ScalarNode, Value: rw.WrappingKind},
		{Kind: yaml.ScalarNode, Value: "items"}, seq,
	}
	if rw.FunctionConfig != nil {
		fields = append(fields, &yaml.Node{Kind: yaml.ScalarNode, Value: "functionConfig"}, rw.FunctionConfig.YNode())
	}
	if rw.Results != nil {
		fields = append(fields, &yaml.Node{Kind: yaml.ScalarNode, Value: "results"}, rw.Results.YNode())
	}
	var buf bytes.Buffer
	for i := 0; i+1 < len(fields); i += 2 {
		k, v := fields[i], fields[i+1]
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 || v.Style&yaml.FlowStyle != 0 ||
			v.HeadComment != "" || v.LineComment != "" || v.FootComment != "" || v.Anchor != "" {
			if err := writeField(w, &buf, k, v, false); err != nil {
				return err
			}
			continue
		}
		for j, e := range v.Content {
			one := &yaml.Node{Kind: yaml.SequenceNode, Tag: v.Tag, Style: v.Style, Content: []*yaml.Node{e}}
			if err := writeField(w, &buf, k, one, j > 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeField encodes one top-level field as its own document, without its key line when
// cutKey (an element after the first of a sequence).
func writeField(w io.Writer, buf *bytes.Buffer, k, v *yaml.Node, cutKey bool) error {
	buf.Reset()
	enc := yaml.NewEncoder(buf)
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}}}}
	if err := enc.Encode(doc); err != nil {
		return errors.Wrap(err)
	}
	if err := enc.Close(); err != nil {
		return errors.Wrap(err)
	}
	out := buf.Bytes()
	if cutKey {
		key := k.Value + ":\n"
		if !bytes.HasPrefix(out, []byte(key)) {
			return fmt.Errorf("writing %s: element does not start with %q", k.Value, key)
		}
		out = out[len(key):]
	}
	_, err := w.Write(out)
	return err
}
