package main

import (
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

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
func writeWrapped(w io.Writer, rw *kio.ByteReadWriter, items []*yaml.RNode) error {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for i, it := range items {
		// An item sparkui cannot read is written exactly as it came (see encodeItems).
		if function.Unreadable(it, i) == nil {
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
