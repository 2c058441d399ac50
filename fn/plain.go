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
// with no annotation the input did not carry. A document that is not a Kubernetes object
// (no apiVersion or no kind: `hello: world`) is refused, since it is neither a ResourceList nor
// something kubectl would apply.
func runPlain(items []*yaml.RNode, stdout, stderr io.Writer) int {
	bad := false
	for i, it := range items {
		var missing []string
		for _, f := range []string{"apiVersion", "kind"} {
			if v, err := it.GetString(f); err != nil || v == "" {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(stderr, "sparkui-fn: standard input, document %d: not a ResourceList and not a Kubernetes object (no %s)\n",
				i+1, joinAnd(missing))
			bad = true
		}
	}
	if bad {
		return 1
	}
	rl := &framework.ResourceList{Items: items}
	if err := function.Process(rl); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	out, err := encodeItems(rl.Items, nil)
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	stdout.Write(out)
	return reportErrors(rl.Results, stderr)
}

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and no " + s[1]
	}
	return s[0]
}
