package yamlx

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// YAML aliases and merge keys in the input. yaml.v3's node tree keeps an alias as a pointer to
// the anchored node and a merge key (`<<: *base`) as an ordinary pair, so an edit through one
// name shows through every other (sparkui's mount in spec.driver appears in spec.executor, an
// `executor: *pod`), and a lookup of a merged key finds nothing (sparkui's explicit
// `template:` then shadows the one `<<: *common` supplies, whose nodeSelector and tolerations
// the operator never sees). Every reader of the manifests (kubectl, the API server, kustomize)
// resolves both: the objects are read and edited as that resolution, and an object the edits
// leave as it was is written back as it came, aliases and all.

// Unaliased is a list of objects in which each object that uses YAML aliases, merge keys or
// anchors is replaced by a copy with all of them resolved (Expand); the others are the
// objects themselves.
type Unaliased struct {
	Items []*yaml.RNode
	// orig maps each copy to the object it was made from.
	orig map[*yaml.RNode]*yaml.RNode
}

// Unalias resolves the aliases and merge keys of items (see Unaliased). It never modifies an
// item. An object whose merge keys yaml.v3 itself could not resolve (a merge of a scalar) is
// kept as it is.
func Unalias(items []*yaml.RNode) *Unaliased {
	u := &Unaliased{Items: items}
	for i, it := range items {
		if it == nil || !usesAliases(it.YNode()) {
			continue
		}
		n, err := Expand(it.YNode())
		if err != nil {
			continue
		}
		if u.orig == nil {
			u.Items = append([]*yaml.RNode(nil), items...)
			u.orig = map[*yaml.RNode]*yaml.RNode{}
		}
		c := yaml.NewRNode(n)
		u.Items[i] = c
		u.orig[c] = it
	}
	return u
}

// Restore maps a list made from u.Items back to what is written, object for object (the
// objects of the input, never copies in their place): an object whose copy still holds its
// data is written as it came, aliases and all; one whose copy was edited takes the copy's
// resolved tree. An alias of another object left naming an anchor that is no longer written
// before it (it was in a tree now replaced) is resolved in place, to the data it named before
// any edit.
func (u *Unaliased) Restore(items []*yaml.RNode) []*yaml.RNode {
	if u.orig == nil {
		return items
	}
	out := make([]*yaml.RNode, len(items))
	// written is the tree each object will be written with.
	written := make([]*yaml.Node, len(items))
	var edited [][2]*yaml.RNode
	for i, it := range items {
		out[i], written[i] = it, it.YNode()
		o := u.orig[it]
		if o == nil {
			continue
		}
		out[i] = o
		if n, err := Expand(o.YNode()); err == nil && Equal(n, it.YNode()) {
			written[i] = o.YNode()
			continue
		}
		edited = append(edited, [2]*yaml.RNode{o, it})
	}
	// Before any tree is replaced: an alias naming a replaced node still finds it unedited.
	seen := map[*yaml.Node]bool{}
	for _, n := range written {
		fixDangling(n, seen)
	}
	for _, e := range edited {
		e[0].SetYNode(e[1].YNode())
	}
	return out
}

// fixDangling walks n in document order, recording anchors, and replaces each alias whose
// anchor was not seen before it with the resolved data it names.
func fixDangling(n *yaml.Node, seen map[*yaml.Node]bool) {
	if n.Anchor != "" {
		seen[n] = true
	}
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			if !seen[c.Alias] {
				if r, err := Expand(c); err == nil {
					n.Content[i] = r
				}
			}
			continue
		}
		fixDangling(c, seen)
	}
}

// usesAliases reports whether n's tree (aliases not followed) holds an alias, a merge key or an
// anchor (whose node an alias elsewhere in a ResourceList may name).
func usesAliases(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || isMergeKey(n) {
		return true
	}
	for _, c := range n.Content {
		if usesAliases(c) {
			return true
		}
	}
	return false
}

func isMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && n.ShortTag() == yaml.MergeTag
}

var errMerge = errors.New("yamlx: a merge key's value is not a mapping or a list of mappings")

// Expand returns a copy of n in which every alias is replaced by a copy of the data it names,
// every merge key by the keys it merges that the mapping does not set itself (in the order
// yaml.v3's decoder gives them precedence: the mapping's own keys, then the merged mappings
// in the order listed), and no node has an anchor. n and what it names are never modified.
// The copy is as large as the resolved tree, which nested aliases make exponential in the
// input's size (an alias bomb): Expand is the one place that resolves aliases for the
// function, where the input's alias budget applies; an error leaves the object unresolved.
func Expand(n *yaml.Node) (*yaml.Node, error) {
	switch n.Kind {
	case yaml.AliasNode:
		r, err := Expand(n.Alias)
		if err != nil {
			return nil, err
		}
		// The alias's own comments are what the reader saw at this place.
		r.HeadComment, r.LineComment, r.FootComment = n.HeadComment, n.LineComment, n.FootComment
		return r, nil
	case yaml.MappingNode:
		return expandMapping(n)
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		var err error
		if c.Content[i], err = Expand(e); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func expandMapping(n *yaml.Node) (*yaml.Node, error) {
	c := *n
	c.Anchor = ""
	c.Content = nil
	own := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !isMergeKey(n.Content[i]) {
			own[n.Content[i].Value] = true
		}
	}
	merged := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			ek, err := Expand(k)
			if err != nil {
				return nil, err
			}
			ev, err := Expand(v)
			if err != nil {
				return nil, err
			}
			c.Content = append(c.Content, ek, ev)
			continue
		}
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, s := range srcs {
			m, err := Expand(s)
			if err != nil {
				return nil, err
			}
			if m.Kind != yaml.MappingNode {
				return nil, errMerge
			}
			for j := 0; j+1 < len(m.Content); j += 2 {
				key := m.Content[j].Value
				if own[key] || merged[key] {
					continue
				}
				merged[key] = true
				c.Content = append(c.Content, m.Content[j], m.Content[j+1])
			}
		}
	}
	return &c, nil
}
