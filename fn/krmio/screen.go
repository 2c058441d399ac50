package krmio

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/validate"
)

// Rules raised while screening the input, before there is a model.
const (
	// ShapeRule: an item is no Kubernetes object, or its metadata or annotations are not
	// mappings.
	ShapeRule = "SUI030"
	// AliasRule: an item's aliases expand beyond yamlx's bound, or contain themselves.
	AliasRule = "SUI051"
)

// Held is the set of items sparkui cannot read, found once per input by Screen: every
// reader of this package screens what it read, the function reads none of them, and every
// writer writes them exactly as they came. kyaml's own readers and writers index metadata
// and metadata.annotations as mappings (a list there panics, a scalar is dropped), and an
// alias bomb would expand without end.
type Held struct {
	why map[*yaml.RNode]*framework.Result
	// Results are the reasons, in input order.
	Results framework.Results
}

// Screen finds the items sparkui cannot read; i is an item's position in the input.
func Screen(items []*yaml.RNode) *Held {
	h := &Held{}
	for i, it := range items {
		if r := unreadable(it, i); r != nil {
			if h.why == nil {
				h.why = map[*yaml.RNode]*framework.Result{}
			}
			h.why[it] = r
			h.Results = append(h.Results, r)
		}
	}
	return h
}

// Has reports whether it is held (nil Held holds nothing).
func (h *Held) Has(it *yaml.RNode) bool { return h != nil && h.why[it] != nil }

// Why is the result that holds it, nil when it is read.
func (h *Held) Why(it *yaml.RNode) *framework.Result {
	if h == nil {
		return nil
	}
	return h.why[it]
}

// Len is how many items are held.
func (h *Held) Len() int {
	if h == nil {
		return 0
	}
	return len(h.why)
}

// Readable is items without the held ones (items itself when none is held).
func (h *Held) Readable(items []*yaml.RNode) []*yaml.RNode {
	if h.Len() == 0 {
		return items
	}
	out := make([]*yaml.RNode, 0, len(items))
	for _, it := range items {
		if !h.Has(it) {
			out = append(out, it)
		}
	}
	return out
}

// Restore puts the held items back where they were among what processing wrote (out, the
// readable items as processing left them): the input's order (in), then what was added.
func (h *Held) Restore(in, out []*yaml.RNode) []*yaml.RNode {
	if h.Len() == 0 {
		return out
	}
	written := make(map[*yaml.RNode]bool, len(out))
	for _, it := range out {
		written[it] = true
	}
	inInput := make(map[*yaml.RNode]bool, len(in))
	res := make([]*yaml.RNode, 0, len(out)+h.Len())
	for _, it := range in {
		inInput[it] = true
		if h.Has(it) || written[it] {
			res = append(res, it)
		}
	}
	for _, it := range out {
		if !inInput[it] {
			res = append(res, it)
		}
	}
	return res
}

// unreadable reports why an item cannot be read as a Kubernetes object, as a result naming
// the object and the field; nil when it can. i is its position in the input.
func unreadable(it *yaml.RNode, i int) *framework.Result {
	n := it.YNode()
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return validate.NewResult(ShapeRule, framework.Error, nil, "",
			fmt.Sprintf("object %d of the input is %s, not a Kubernetes object (a mapping); sparkui leaves it as it is", i+1, yamlx.Shape(n)))
	}
	who := describeAt(it, i)
	var missing []string
	for _, f := range []string{"apiVersion", "kind"} {
		if yamlx.GetStr(n, f) == "" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return validate.NewResult(ShapeRule, framework.Error, it, missing[0],
			fmt.Sprintf("%s is not a Kubernetes object: it has no %s; kubectl refuses it, sparkui leaves it as it is. "+
				"If it is not a manifest (Helm values, a tool's settings), keep it out of the input: out of the directory given to sparkui-fn validate, or out of the kustomization's resources", who, strings.Join(missing, " and no ")))
	}
	md := yamlx.Get(n, "metadata")
	if !yamlx.IsNull(md) && md.Kind != yaml.MappingNode {
		return validate.NewResult(ShapeRule, framework.Error, it, "metadata",
			fmt.Sprintf("%s: metadata is %s, not a mapping; kubectl refuses the object, sparkui leaves it as it is", who, yamlx.Shape(md)))
	}
	if ann := yamlx.Get(md, "annotations"); !yamlx.IsNull(ann) && ann.Kind != yaml.MappingNode {
		return validate.NewResult(ShapeRule, framework.Error, it, "metadata.annotations",
			fmt.Sprintf("%s: metadata.annotations is %s, not a mapping; kubectl refuses the object, sparkui leaves it as it is", who, yamlx.Shape(ann)))
	}
	if err := yamlx.CheckAliases(n); err != nil {
		if name := yamlx.GetStr(md, "name"); name != "" {
			who = fmt.Sprintf("%s (object %d of the input)", who, i+1)
		}
		return validate.NewResult(AliasRule, framework.Error, it, "",
			fmt.Sprintf("%s: %v; sparkui reads no further and leaves it as it is", who, err))
	}
	return nil
}

// describeAt names an object as messages do, and by its position when it has no name: in its
// file when the input says which (kustomize, kpt and sparkui-fn validate annotate it), since
// "object 7 of the input" leaves the user counting documents across a whole build.
func describeAt(it *yaml.RNode, i int) string {
	n := it.YNode()
	kind := yamlx.GetStr(n, "kind")
	md := yamlx.Get(n, "metadata")
	ns, name := yamlx.GetStr(md, "namespace"), yamlx.GetStr(md, "name")
	where := fmt.Sprintf("object %d of the input", i+1)
	if ann := yamlx.Get(md, "annotations"); ann != nil && ann.Kind == yaml.MappingNode {
		if p := yamlx.GetStr(ann, kioutil.PathAnnotation); p != "" {
			where = "object " + p
			if ix, err := strconv.Atoi(yamlx.GetStr(ann, kioutil.IndexAnnotation)); err == nil {
				where = fmt.Sprintf("document %d of %s", ix+1, p)
			}
		}
	}
	switch {
	case name == "" && kind == "":
		return where
	case name == "":
		return fmt.Sprintf("%s (%s, no name)", kind, where)
	case ns != "":
		name = ns + "/" + name
	}
	if kind == "" {
		return name
	}
	return kind + " " + name
}
