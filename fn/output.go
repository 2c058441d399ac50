package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// encodeItems writes a plain stream's items as kyaml's ByteWriter does with
// KeepReaderAnnotations (the writer the plain path used), except that an item sparkui cannot read
// (function.Unreadable: metadata or annotations that are no mapping, an alias bomb) is
// written exactly as it came: ByteWriter indexes metadata.annotations as a mapping, which
// panics on a list and drops a scalar. Everything is encoded into memory first; the caller
// writes it in one piece, so a failure never leaves half a document on stdout.
func encodeItems(items []*yaml.RNode) ([]byte, error) {
	var buf bytes.Buffer
	readable := make([]bool, len(items))
	seqIndent := make([]string, len(items))
	for i, it := range items {
		if function.Unreadable(it, i) != nil {
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

// runResourceList is framework.Execute for a ResourceList (or List) on stdin, with the items
// sparkui cannot read kept out of kyaml's annotation bookkeeping (which fails on them and
// loses every item) and written back as they came. ok is false when kyaml cannot read the
// input at all; the KRM path then reports it as it always has.
//
// The results go into the output's `results` field only for a ResourceList: that field is the
// ResourceList's (kustomize cmd/config/docs/api-conventions/functions-spec.md, apiVersion v1:
// a function reads and writes a ResourceList, whose results field carries its findings). A
// v1 List, which kyaml's reader also accepts, has no such field: kyaml's writer adds it anyway
// (kio/byteio_writer.go writes Results whatever the wrapping kind), which strict schema
// checks of a List refuse. For a List, inList is true and the caller prints the results on
// stderr instead, as for a plain stream.
func runResourceList(data []byte, opts function.Options) (out []byte, results framework.Results, ok, inList bool, err error) {
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), KeepReaderAnnotations: true}
	items, rerr := rw.Read()
	if rerr != nil || rw.WrappingKind == "" {
		return nil, nil, false, false, nil
	}
	rw.Reader = nil // the input's bytes, no longer needed while the output is built
	rl := &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	var readable []*yaml.RNode
	for i, it := range items {
		if function.Unreadable(it, i) == nil {
			readable = append(readable, it)
		}
	}
	annos, err := kio.PreprocessResourcesForInternalAnnotationMigration(readable)
	if err != nil {
		return nil, nil, true, false, err
	}
	if err := function.ProcessWith(rl, opts); err != nil {
		return nil, nil, true, false, err
	}
	readable = readable[:0]
	for i, it := range rl.Items {
		if function.Unreadable(it, i) == nil {
			readable = append(readable, it)
		}
	}
	if err := kio.ReconcileInternalAnnotations(readable, annos); err != nil {
		return nil, nil, true, false, err
	}
	inList = rw.WrappingKind != kio.ResourceListKind
	if len(rl.Results) > 0 && !inList {
		// framework.Execute marshals and parses the results as one sequence, which holds one
		// document's emitter events at once; one result at a time gives the same nodes.
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, r := range rl.Results {
			b, err := yaml.Marshal(r)
			if err != nil {
				return nil, nil, true, false, err
			}
			y, err := yaml.Parse(string(b))
			if err != nil {
				return nil, nil, true, false, err
			}
			seq.Content = append(seq.Content, y.YNode())
		}
		rw.Results = yaml.NewRNode(seq)
	}
	var buf bytes.Buffer
	err = writeWrapped(&buf, rw, rl.Items)
	return buf.Bytes(), rl.Results, true, inList, err
}
