// Package yamlx is a thin layer over kyaml's yaml.Node for what every sparkui package does to
// manifests: read a field without caring whether the input has the shape it should (arbitrary
// YAML must never panic), and edit in place so untouched keys keep their order and comments.
package yamlx

import (
	"fmt"
	"math"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Get walks mapping keys; nil when any step is missing or not a mapping.
func Get(n *yaml.Node, path ...string) *yaml.Node {
	for _, k := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

// Str is a scalar's value, "" for anything else.
func Str(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// GetStr is Str(Get(n, path...)).
func GetStr(n *yaml.Node, path ...string) string { return Str(Get(n, path...)) }

// Int reads an integer scalar; ok is false when n is missing or not an integer.
func Int(n *yaml.Node) (int, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || v < -1<<31 || v > 1<<31-1 {
		return 0, false
	}
	return int(v), true
}

// Port reads a port number as the API server does: an integer, or a YAML float with an
// integral value (kubectl's YAML-to-JSON conversion writes 9090.0 as 9090, which decodes into
// an int32; Jackson, reading a Spark pod template, coerces it too). ok is false for anything
// else ("nine", 9090.5, a missing field).
func Port(n *yaml.Node) (int, bool) {
	if v, ok := Int(n); ok {
		return v, true
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != yaml.NodeTagFloat {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || f != math.Trunc(f) || f < -1<<31 || f > 1<<31-1 {
		return 0, false
	}
	return int(f), true
}

// Items is a sequence's elements, nil for anything else.
func Items(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// Pairs calls fn for each key/value of a mapping.
func Pairs(n *yaml.Node, fn func(k, v *yaml.Node)) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

// StringMap reads a mapping of scalars (labels, selectors); non-scalar values are skipped.
func StringMap(n *yaml.Node) map[string]string {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	m := make(map[string]string, len(n.Content)/2)
	Pairs(n, func(k, v *yaml.Node) {
		if v.Kind == yaml.ScalarNode {
			m[k.Value] = v.Value
		}
	})
	return m
}

// Set puts value under key in mapping m, replacing an existing value in place (keeping the
// key's comments) or appending the key. m must be a mapping.
func Set(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			keepComments(m.Content[i+1], value)
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, NewStr(key), value)
}

func keepComments(old, repl *yaml.Node) {
	if repl.LineComment == "" {
		repl.LineComment = old.LineComment
	}
	if repl.HeadComment == "" {
		repl.HeadComment = old.HeadComment
	}
	if repl.FootComment == "" {
		repl.FootComment = old.FootComment
	}
}

// Ensure returns the mapping under key in m, creating an empty one when missing or when the
// value there is not a mapping. m must be a mapping.
func Ensure(m *yaml.Node, key string) *yaml.Node {
	if v := Get(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := NewMap()
	Set(m, key, v)
	return v
}

// EnsureSeq is Ensure for a sequence.
func EnsureSeq(m *yaml.Node, key string) *yaml.Node {
	if v := Get(m, key); v != nil && v.Kind == yaml.SequenceNode {
		return v
	}
	v := NewSeq()
	Set(m, key, v)
	return v
}

// Delete removes key from mapping m; it reports whether it was there.
func Delete(m *yaml.Node, key string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// Filter keeps the elements of sequence s for which keep is true; it reports whether any
// element was removed.
func Filter(s *yaml.Node, keep func(*yaml.Node) bool) bool {
	if s == nil || s.Kind != yaml.SequenceNode {
		return false
	}
	out := s.Content[:0]
	for _, e := range s.Content {
		if keep(e) {
			out = append(out, e)
		}
	}
	removed := len(out) != len(s.Content)
	for i := len(out); i < len(s.Content); i++ {
		s.Content[i] = nil
	}
	s.Content = out
	return removed
}

// Equal reports whether a and b hold the same data (ignoring style and comments).
func Equal(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode {
		return a.Value == b.Value && a.ShortTag() == b.ShortTag()
	}
	for i := range a.Content {
		if !Equal(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// SetIfChanged sets key to value unless it already holds equal data, so reruns leave the
// original bytes (quoting, comments) alone. It reports whether it changed anything.
func SetIfChanged(m *yaml.Node, key string, value *yaml.Node) bool {
	if Equal(Get(m, key), value) {
		return false
	}
	Set(m, key, value)
	return true
}

// NewStr is a string scalar.
func NewStr(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
}

// NewInt is an integer scalar.
func NewInt(v int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(v)}
}

// NewBool is a boolean scalar.
func NewBool(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(v)}
}

// NewMap builds a mapping from alternating keys and values, in order.
func NewMap(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, NewStr(kv[i].(string)), Node(kv[i+1]))
	}
	return m
}

// NewSeq builds a sequence.
func NewSeq(items ...any) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
	for _, it := range items {
		s.Content = append(s.Content, Node(it))
	}
	return s
}

// Node converts a Go value (string, int, bool, []string, *yaml.Node) to a node.
func Node(v any) *yaml.Node {
	switch t := v.(type) {
	case *yaml.Node:
		return t
	case string:
		return NewStr(t)
	case int:
		return NewInt(t)
	case bool:
		return NewBool(t)
	case []string:
		s := NewSeq()
		for _, e := range t {
			s.Content = append(s.Content, NewStr(e))
		}
		return s
	}
	panic("yamlx: unsupported value type")
}

// IsNull reports whether n is absent or YAML null (`~`, `null`, nothing).
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull)
}

// Shape names n's kind of value as shape errors say it: "a list", "a mapping", "the scalar
// \"x\"", "an alias".
func Shape(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "empty"
}
