package yamlx

import (
	"bytes"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func expandString(t *testing.T, src string) string {
	t.Helper()
	rn, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Expand(rn.YNode())
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	s, err := yaml.NewRNode(n).String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExpand: aliases become copies, merge keys the keys they merge with yaml.v3's precedence
// (the mapping's own keys, then the merged mappings in the order listed), and no anchor is left.
func TestExpand(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"alias", "a: &x {k: v}\nb: *x\n", "a: {k: v}\nb: {k: v}\n"},
		{"merge", "base: &b {k: 1, l: 2}\nm:\n  <<: *b\n  l: 3\n", "base: {k: 1, l: 2}\nm:\n  k: 1\n  l: 3\n"},
		{"own key before the merge wins", "base: &b {k: 1}\nm:\n  k: 0\n  <<: *b\n", "base: {k: 1}\nm:\n  k: 0\n"},
		{"merge list: the first wins", "a: &a {k: a}\nb: &b {k: b, l: b}\nm:\n  <<: [*a, *b]\n", "a: {k: a}\nb: {k: b, l: b}\nm:\n  k: a\n  l: b\n"},
		{"nested merge", "a: &a {k: a}\nb: &b\n  <<: *a\n  l: b\nm: {<<: *b}\n", "a: {k: a}\nb:\n  k: a\n  l: b\nm: {k: a, l: b}\n"},
		{"quoted << is a key", "m: {\"<<\": x}\n", "m: {\"<<\": x}\n"},
		{"scalar alias", "a: &v hello\nb: *v\n", "a: hello\nb: hello\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := expandString(t, tc.in); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	rn, _ := yaml.Parse("a: 1\nm: {<<: x}\n")
	if _, err := Expand(rn.YNode()); err == nil {
		t.Error("a merge of a scalar expanded without error")
	}
}

func readItems(t *testing.T, src string) []*yaml.RNode {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: bytes.NewBufferString(src), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func writeItems(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}).Write(items); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestUnaliasRestore: objects without aliases are used as they are; the others are read as
// resolved copies, never modified; Restore gives back an unedited object as written, keeps an
// edited copy, and resolves an alias of another object that named an anchor of the replaced
// one, to the data it named before the edit.
func TestUnaliasRestore(t *testing.T) {
	const in = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- kind: A
  metadata: {name: plain}
- kind: B
  metadata: {name: edited}
  spec: &s {x: 1}
  copy: *s
- kind: C
  metadata: {name: untouched}
  data: &d {k: v}
  again: *d
- kind: D
  metadata: {name: other}
  fromB: *s
`
	items := readItems(t, in)
	before := writeItems(t, items)
	u := Unalias(items)
	if u.Items[0] != items[0] {
		t.Error("an object without aliases was copied")
	}
	for i := 1; i < 4; i++ {
		if u.Items[i] == items[i] {
			t.Errorf("item %d was not copied", i)
		}
	}
	if writeItems(t, items) != before {
		t.Error("Unalias modified the input")
	}
	// Edit B's copy where its spec was shared with its copy field and with D.
	Set(Get(u.Items[1].YNode(), "spec"), "y", NewInt(2))
	out := u.Restore(u.Items)
	if out[0] != items[0] || out[1] != items[1] || out[2] != items[2] || out[3] != items[3] {
		t.Errorf("restored %v, want the input objects", out)
	}
	want := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- kind: A
  metadata: {name: plain}
- kind: B
  metadata: {name: edited}
  spec: {x: 1, y: 2}
  copy: {x: 1}
- kind: C
  metadata: {name: untouched}
  data: &d {k: v}
  again: *d
- kind: D
  metadata: {name: other}
  fromB: {x: 1}
`
	if got := writeItems(t, out); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if u := Unalias(items[:1]); u.Restore(u.Items)[0] != items[0] {
		t.Error("no alias: Restore changed the list")
	}
}

// TestRestoreAliasOfWholeObject: an alias naming a whole object that sparkui then edits gets
// the object's data from before the edit.
func TestRestoreAliasOfWholeObject(t *testing.T) {
	items := readItems(t, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- &e
  kind: E
  metadata: {name: e}
- kind: F
  metadata: {name: f}
  whole: *e
`)
	u := Unalias(items)
	Set(u.Items[0].YNode(), "spec", NewStr("edited"))
	out := u.Restore(u.Items)
	want := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- kind: E
  metadata: {name: e}
  spec: edited
- kind: F
  metadata: {name: f}
  whole:
    kind: E
    metadata: {name: e}
`
	if got := writeItems(t, out); got != want || out[0] != items[0] || out[1] != items[1] {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
