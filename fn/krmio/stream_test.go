package krmio

import (
	"bytes"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// plainSeeds are plain streams whose layout could tell one encoder from one per document:
// comments before, between and after documents, explicit document markers, a document head
// comment, a bare sequence, wide and compact sequences, block scalars kept to the last newline.
var plainSeeds = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	"---\n# head of a\napiVersion: v1 # line\nkind: ConfigMap\nmetadata:\n  name: a\n# foot of a\n---\n# head of b\n\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: |+\n    kept\n\n\n...\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\ndata:\n  l:\n    - a\n    - b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: compact\nlist:\n- a\n",
	"- a\n- b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b, annotations: {}}\n",
}

// FuzzEncodeItems: encodeItems (one encoder per document) writes what kio.ByteWriter (one
// encoder for the stream) writes, byte for byte, on any plain stream sparkui can read.
func FuzzEncodeItems(f *testing.F) {
	for _, s := range plainSeeds {
		f.Add([]byte(s))
	}
	for _, in := range writerInputs(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
		items, err := r.Read()
		if err != nil || r.WrappingKind != "" || len(items) == 0 {
			return
		}
		held := Screen(items)
		if held.Len() > 0 {
			return // written as it came, where ByteWriter may drop or panic
		}
		var want bytes.Buffer
		if !kyamlWrites(&kio.ByteReadWriter{Writer: &want, KeepReaderAnnotations: true}, items) {
			return
		}
		got, err := encodeItems(items, held)
		if err != nil {
			t.Fatalf("encodeItems: %v\nkyaml wrote:\n%s", err, want.Bytes())
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("encodeItems wrote:\n%s\nkio.ByteWriter writes:\n%s", got, want.Bytes())
		}
	})
}
