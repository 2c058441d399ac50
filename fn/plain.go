package main

import (
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// plainStream reads stdin when it is a plain multi-document stream (`kustomize build … |
// sparkui-fn`) rather than a ResourceList. kyaml's reader annotates every object of such a
// stream with config.kubernetes.io/index and internal.config.kubernetes.io/index and its writer
// keeps them, so they would reach what is then applied; this path reads without them. ok is
// false for a ResourceList, and for input kyaml cannot read, which the KRM path then reports
// as it always has.
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

// runPlain runs the function on a plain stream and writes the objects back as a plain stream,
// with no annotation the input did not carry, and every result on stderr (a stream has no
// results field). A document that is not a Kubernetes object
// (no apiVersion or no kind: `hello: world`) is an error result (SUI030), as in a
// ResourceList and in `sparkui-fn validate`, and is written back as it came.
func runPlain(items []*yaml.RNode, opts function.Options, stdout, stderr io.Writer) int {
	rl := &framework.ResourceList{Items: items}
	if err := function.ProcessWith(rl, opts); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	out, err := encodeItems(rl.Items)
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	stdout.Write(out)
	return reportAll(rl.Results, stderr)
}
