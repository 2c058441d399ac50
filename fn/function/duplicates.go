package function

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/validate"
)

// DuplicateKeyRule is reported for a mapping that defines a key twice. kyaml reads through
// yaml.v3's node parser, which keeps both keys (only decoding into Go values refuses them);
// lookups then see the first, kubectl refuses the object ("mapping key already defined"), and
// a later tool may keep the second. What the object means is unknown, so nothing is changed.
const DuplicateKeyRule = "SUI021"

// duplicateKeys reports every key defined twice in a mapping of an item, at the field path of
// the key.
func duplicateKeys(items []*yaml.RNode) framework.Results {
	var out framework.Results
	for _, it := range items {
		walkDuplicates(it.YNode(), "", func(path string, key *yaml.Node) {
			out = append(out, validate.NewResult(DuplicateKeyRule, framework.Error, it, path,
				fmt.Sprintf("%s: key %q is defined twice in one mapping: kubectl refuses the object (\"mapping key already defined\"); keep one",
					describeObject(it), key.Value)))
		})
	}
	return out
}

func walkDuplicates(n *yaml.Node, path string, found func(path string, key *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkDuplicates(c, path, found)
		}
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := fieldpath.Key(path, k.Value)
			// Merge keys (<<) are resolved, not stored: several are legal YAML 1.1.
			if k.Value != "<<" || k.Tag != "!!merge" {
				if seen[k.Value] {
					found(p, k)
				}
				seen[k.Value] = true
			}
			walkDuplicates(n.Content[i+1], p, found)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkDuplicates(c, fieldpath.Index(path, i), found)
		}
	}
	// Aliases are not followed: what they point at is checked where it is defined.
}

// describeObject names an object as messages do: Kind namespace/name, as far as it has them.
func describeObject(rn *yaml.RNode) string {
	kind, _ := rn.GetString("kind")
	ns, _ := rn.GetString("metadata.namespace")
	name, _ := rn.GetString("metadata.name")
	if ns != "" {
		name = ns + "/" + name
	}
	switch {
	case kind == "" && name == "":
		return "an object"
	case kind == "":
		return name
	}
	return kind + " " + name
}
