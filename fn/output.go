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

// wrapper is the list a ResourceList (or List) input came in, written back around the items.
type wrapper struct {
	apiVersion, kind        string
	functionConfig, results *yaml.RNode
}

// encodeItems is what kyaml's ByteWriter writes with KeepReaderAnnotations (the writer
// framework.Execute and the plain path used), except that an item sparkui cannot read
// (function.Unreadable: metadata or annotations that are no mapping, an alias bomb) is
// written exactly as it came: ByteWriter indexes metadata.annotations as a mapping, which
// panics on a list and drops a scalar. Everything is encoded into memory first; the caller
// writes it in one piece, so a failure never leaves half a document on stdout.
func encodeItems(items []*yaml.RNode, wrap *wrapper) ([]byte, error) {
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
	if wrap == nil && len(items) == 1 && readable[0] && isJSONFile(items[0]) {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err := enc.Encode(items[0])
		return buf.Bytes(), err
	}
	enc := yaml.NewEncoder(&buf)
	if wrap == nil {
		for i, it := range items {
			if seqIndent[i] == string(yaml.WideSequenceStyle) {
				enc.DefaultSeqIndent()
			} else {
				enc.CompactSeqIndent()
			}
			if err := enc.Encode(unwrapBareSeq(it.Document())); err != nil {
				return nil, err
			}
		}
	} else {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, it := range items {
			seq.Content = append(seq.Content, it.YNode())
		}
		list := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "apiVersion"}, {Kind: yaml.ScalarNode, Value: wrap.apiVersion},
			{Kind: yaml.ScalarNode, Value: "kind"}, {Kind: yaml.ScalarNode, Value: wrap.kind},
			{Kind: yaml.ScalarNode, Value: "items"}, seq,
		}}
		if wrap.functionConfig != nil {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "functionConfig"}, wrap.functionConfig.YNode())
		}
		if wrap.results != nil {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "results"}, wrap.results.YNode())
		}
		if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{list}}); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
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
func runResourceList(data []byte) (out []byte, results framework.Results, ok bool, err error) {
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), KeepReaderAnnotations: true}
	items, rerr := rw.Read()
	if rerr != nil || rw.WrappingKind == "" {
		return nil, nil, false, nil
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	var readable []*yaml.RNode
	for i, it := range items {
		if function.Unreadable(it, i) == nil {
			readable = append(readable, it)
		}
	}
	annos, err := kio.PreprocessResourcesForInternalAnnotationMigration(readable)
	if err != nil {
		return nil, nil, true, err
	}
	if err := function.Process(rl); err != nil {
		return nil, nil, true, err
	}
	readable = readable[:0]
	for i, it := range rl.Items {
		if function.Unreadable(it, i) == nil {
			readable = append(readable, it)
		}
	}
	if err := kio.ReconcileInternalAnnotations(readable, annos); err != nil {
		return nil, nil, true, err
	}
	wrap := &wrapper{apiVersion: rw.WrappingAPIVersion, kind: rw.WrappingKind, functionConfig: rw.FunctionConfig, results: rw.Results}
	if len(rl.Results) > 0 {
		b, err := yaml.Marshal(rl.Results)
		if err != nil {
			return nil, nil, true, err
		}
		if wrap.results, err = yaml.Parse(string(b)); err != nil {
			return nil, nil, true, err
		}
	}
	out, err = encodeItems(rl.Items, wrap)
	return out, rl.Results, true, err
}
