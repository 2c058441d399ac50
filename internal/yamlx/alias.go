package yamlx

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Aliases may at most double a document, plus this many nodes. yaml.v3's node parser keeps
// aliases as pointers, so reading an alias bomb (a 1 KB document whose nine levels of nine
// aliases stand for 9^9 nodes) costs nothing until something expands it: kyaml's DeAnchor
// copies every alias, and would grow without bound. Manifests that share a template between a
// driver and an executor stay far below the bound; a bomb is refused in microseconds.
const aliasSlack = 10000

// AliasError is a document whose aliases expand beyond the bound, or refer to themselves.
type AliasError struct {
	Line  int // the line of the document's root
	Limit int // 0 when an alias contains itself
}

func (e *AliasError) Error() string {
	if e.Limit == 0 {
		return "an alias refers to a node that contains it: expanding it never ends"
	}
	return fmt.Sprintf("its aliases expand it past twice its size plus %d nodes (an alias bomb, not a manifest)", aliasSlack)
}

// ExpansionLimit is the largest size, in nodes, the expansion of n may reach.
func ExpansionLimit(n *yaml.Node) int { return 2*countNodes(n, map[*yaml.Node]bool{}) + aliasSlack }

// CheckAliases reports, without expanding anything, whether expanding n's aliases (and merge
// keys, which are aliases too) stays within ExpansionLimit(n). Its cost is linear in the
// document, whatever the aliases stand for.
func CheckAliases(n *yaml.Node) error {
	if n == nil || !anyAlias(n) {
		return nil
	}
	limit := ExpansionLimit(n)
	sizes := map[*yaml.Node]int{}
	size, cyclic := expandedSize(n, limit, sizes, map[*yaml.Node]bool{})
	switch {
	case cyclic:
		return &AliasError{Line: n.Line}
	case size > limit:
		return &AliasError{Line: n.Line, Limit: limit}
	}
	return nil
}

// DeAnchor replaces n's aliases and merge keys with what they stand for, in place, as the
// function reads them (Expand), after CheckAliases: it never expands past the
// bound. On an *AliasError n is unchanged.
func DeAnchor(n *yaml.Node) (err error) {
	if n == nil {
		return nil
	}
	if err := CheckAliases(n); err != nil {
		return err
	}
	if !usesAliases(n) {
		return nil
	}
	// The same resolution as the function's (Expand), so validate and the function read one
	// document alike.
	e, err := Expand(n)
	if err != nil {
		return err
	}
	*n = *e
	return nil
}

// anyAlias reports whether n holds an alias, without allocating: most objects hold none, and
// are checked for every item the function reads and writes. Without aliases the nodes form a
// tree, so the walk ends.
func anyAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if anyAlias(c) {
			return true
		}
	}
	return false
}

// countNodes counts the nodes as parsed, each alias as one.
func countNodes(n *yaml.Node, seen map[*yaml.Node]bool) int {
	if n == nil || seen[n] {
		return 0
	}
	seen[n] = true
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch, seen)
	}
	return c
}

// expandedSize is the number of nodes n stands for once every alias is copied, saturated just
// above limit; sizes memoizes it per node so each is visited once. A merge key's value counts
// whole, an upper bound of what the merge copies.
func expandedSize(n *yaml.Node, limit int, sizes map[*yaml.Node]int, open map[*yaml.Node]bool) (int, bool) {
	if n == nil {
		return 0, false
	}
	if s, ok := sizes[n]; ok {
		return s, false
	}
	if open[n] {
		return 0, true
	}
	open[n] = true
	defer delete(open, n)
	s := 1
	if n.Kind == yaml.AliasNode {
		a, cyclic := expandedSize(n.Alias, limit, sizes, open)
		if cyclic {
			return 0, true
		}
		s = a
	}
	for _, ch := range n.Content {
		c, cyclic := expandedSize(ch, limit, sizes, open)
		if cyclic {
			return 0, true
		}
		s = min(s+c, limit+1)
	}
	sizes[n] = s
	return s, false
}
