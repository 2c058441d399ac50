package krmio

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// writerSeeds are ResourceLists whose layout could tell one document from one per element:
// comments around and between items, block scalars kept to the last newline, anchors used
// across items, flow items, an empty list, a List, results and a functionConfig with comments.
var writerSeeds = []string{
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n# head of the first\n- apiVersion: v1 # line\n  kind: ConfigMap\n  metadata: {name: a}\n  # foot of a\n\n# head of the second\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n    annotations: {}\n  data:\n    k: |+\n      kept\n\n\n# foot of the list\nfunctionConfig:\n  # head\n  apiVersion: v1\n  kind: ConfigMap # line\n  data: {mode: validate}\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &cm\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: &d {k: v}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data: *d\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}, {apiVersion: v1, kind: Secret, metadata: {name: b}}]\n",
	"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    script: |\n      one\n\n      three\n    folded: >-\n      a\n      b\n    long: \"" + string(bytes.Repeat([]byte("x "), 80)) + "\"\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\nresults:\n- message: before\n  severity: info\n- message: |\n    two\n    lines\n  severity: warning\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\nresults: []\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: wide\n    data:\n      l:\n        - a\n        - b\n",
}

func writerInputs(tb testing.TB) [][]byte {
	var ins [][]byte
	for _, s := range writerSeeds {
		ins = append(ins, []byte(s))
	}
	files, _ := filepath.Glob("../../testdata/*/*.yaml")
	if len(files) < 25 {
		tb.Fatalf("only %d fixture files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		ins = append(ins, b)
	}
	return ins
}

// FuzzWriteWrapped: writeWrapped writes what kio.ByteWriter writes, byte for byte, on any
// ResourceList or List kyaml can read and write, except items sparkui cannot read
// (Held), which it writes back as they came where ByteWriter drops a scalar
// metadata.annotations: for those it must only succeed.
func FuzzWriteWrapped(f *testing.F) {
	for _, in := range writerInputs(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), KeepReaderAnnotations: true}
		items, err := rw.Read()
		if err != nil || rw.WrappingKind == "" {
			return
		}
		held := Screen(items)
		if held.Len() > 0 {
			if err := writeWrapped(io.Discard, rw, items, held); err != nil {
				t.Fatalf("writeWrapped with %d unreadable items: %v", held.Len(), err)
			}
			return
		}
		var want bytes.Buffer
		rw.Writer = &want
		if !kyamlWrites(rw, items) {
			return
		}
		var got bytes.Buffer
		if err := writeWrapped(&got, rw, items, held); err != nil {
			t.Fatalf("writeWrapped: %v\nkyaml wrote:\n%s", err, want.Bytes())
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("writeWrapped wrote:\n%s\nkio.ByteWriter writes:\n%s", got.Bytes(), want.Bytes())
		}
	})
}

// kyamlWrites writes items with kio.ByteWriter; false when it fails, or panics (it indexes
// past the end of a metadata mapping with a key and no value: "kind: List\nitems:\n 0:\n  -").
func kyamlWrites(rw *kio.ByteReadWriter, items []*yaml.RNode) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return rw.Write(items) == nil
}
