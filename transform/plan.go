package transform

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// A plan is what transform does to one carrier, as data: a list of operations on field paths
// that one applier (Plan.Apply) executes. Computing the operations only reads the carrier, so
// what sparkui would write (or take out) can be asserted on the plan itself, without
// rendering YAML; the applier is the one place that edits nodes.

// OpKind is what an operation does.
type OpKind int

const (
	// OpEnsure creates a slot of the carrier and what is missing on the way to it
	// (app.Carrier.Ensure).
	OpEnsure OpKind = iota
	// OpUpsert puts Value in the named list of Slot (or the list Field of Slot's mapping) in
	// place of the entry of its name, unless equal, creating the slot and list when absent.
	OpUpsert
	// OpRemove takes out, at Path: the entries of the list named one of Names (When Bare: only
	// an entry left with its name alone after this plan removed something from it); or, without
	// Names, the field itself (When Equal: only when its value is Value; When OurPreStop: only
	// sparkui's withdraw hook). The list or mapping holding what went is deleted when that
	// removal empties it: one that was empty before is the user's and stays.
	OpRemove
	// OpSet sets Key in Slot's mapping (or in the mapping Field of it, created when absent) to
	// Value, unless equal; When Absent: only where Key is missing; When OurPreStop: only where
	// Key is missing or holds sparkui's withdraw hook.
	OpSet
	// OpPrune deletes the mapping at Path when it is empty and this plan removed something
	// under it (the template sparkui created, emptied again).
	OpPrune
	// OpDrop takes the entries at Indexes out of the list at Path, and deletes the list when
	// it is then empty (unless When KeepEmpty).
	OpDrop
)

// When restricts an OpRemove.
type When int

const (
	Always When = iota
	Equal
	OurPreStop
	Bare
	Absent
	KeepEmpty
)

// Op is one operation of a plan.
type Op struct {
	Kind OpKind
	// Slot is the slot of OpEnsure, OpUpsert and OpSet; Field a field of its mapping, Key
	// OpSet's key.
	Slot       app.Slot
	Field, Key string
	// Path is the field path of OpRemove and OpPrune, from the object's root.
	Path  string
	Names []string
	// Indexes are OpDrop's list entries, ascending.
	Indexes []int
	When    When
	// Value is OpUpsert's entry, or OpRemove's value under Equal (a scalar).
	Value *yaml.Node
}

var opNames = [...]string{"ensure", "upsert", "remove", "set", "prune", "drop"}
var whenNames = [...]string{"", " if equal", " if sparkui's preStop", " if bare", " if absent", " keeping the list"}

// String is the operation in one line, what plan tests compare.
func (o Op) String() string {
	s := opNames[o.Kind] + " "
	if o.Kind == OpEnsure || o.Kind == OpUpsert || o.Kind == OpSet {
		s += "slot " + slotName(o.Slot)
		if o.Field != "" {
			s += "." + o.Field
		}
		if o.Key != "" {
			s += " " + o.Key
		}
	} else {
		s += o.Path
	}
	if len(o.Names) > 0 {
		s += " [" + strings.Join(o.Names, " ") + "]"
	}
	if o.Kind == OpDrop {
		s += " " + fmt.Sprint(o.Indexes)
	}
	s += whenNames[o.When]
	if o.Value != nil {
		if o.Kind == OpSet && o.Value.Kind != yaml.ScalarNode {
			s += " = {…}"
		} else if o.Value.Kind == yaml.ScalarNode {
			s += " = " + o.Value.Value
		} else if n := yamlx.GetStr(o.Value, "name"); n != "" {
			s += " " + n
		}
	}
	return s
}

func slotName(s app.Slot) string {
	switch s {
	case app.SlotPodSpec:
		return "podSpec"
	case app.SlotPodLabels:
		return "podLabels"
	case app.SlotInitContainers:
		return "initContainers"
	case app.SlotVolumes:
		return "volumes"
	case app.SlotDriverContainer:
		return "driverContainer"
	}
	return "?"
}

// Plan is the operations for one carrier, in order.
type Plan []Op

// Strings is the plan one operation a line.
func (p Plan) Strings() []string {
	out := make([]string, len(p))
	for i, o := range p {
		out[i] = o.String()
	}
	return out
}

// Apply executes the plan on c's object. Only what exists is looked at by removals, nothing
// is created by them; a field of another shape than the operation expects is left alone
// (nothing of sparkui's is there). It reports whether anything changed.
func (p Plan) Apply(c *app.Carrier) (changed bool, err error) {
	ap := applier{root: c.Object.YNode()}
	for _, o := range p {
		switch o.Kind {
		case OpEnsure:
			_, _, err = c.Ensure(o.Slot)
		case OpUpsert, OpSet:
			var n *yaml.Node
			if n, _, err = c.Ensure(o.Slot); err == nil {
				changed = write(n, o) || changed
			}
		default:
			changed = ap.pathOp(o) || changed
		}
		if err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// applyTo executes a plan of path operations only (OpRemove, OpPrune, OpDrop) on an object
// that is no carrier (a Service selecting the driver).
func (p Plan) applyTo(root *yaml.Node) (changed bool) {
	ap := applier{root: root}
	for _, o := range p {
		changed = ap.pathOp(o) || changed
	}
	return changed
}

// pathOp executes an operation addressed by field path.
func (ap *applier) pathOp(o Op) bool {
	switch o.Kind {
	case OpRemove:
		return ap.remove(o)
	case OpPrune:
		ap.prune(o.Path)
	case OpDrop:
		return ap.drop(o)
	}
	return false
}

func (ap *applier) drop(o Op) bool {
	parent, key := at(ap.root, o.Path)
	list := yamlx.Get(parent, key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return false
	}
	i := -1
	gone := yamlx.Filter(list, func(*yaml.Node) bool {
		i++
		return !slices.Contains(o.Indexes, i)
	})
	if len(list.Content) == 0 && o.When != KeepEmpty {
		return yamlx.Delete(parent, key) || gone
	}
	return gone
}

// applier is one execution of a plan: the paths under which it removed something so far.
type applier struct {
	root    *yaml.Node
	removed []string
}

// under reports whether the plan removed something at or under path.
func (ap *applier) under(path string) bool {
	for _, r := range ap.removed {
		if r == path || strings.HasPrefix(r, path) && (r[len(path)] == '.' || r[len(path)] == '[') {
			return true
		}
	}
	return false
}

func (ap *applier) remove(o Op) bool {
	parent, key := at(ap.root, o.Path)
	if parent == nil || !removeAt(parent, key, o, ap.under) {
		return false
	}
	ap.removed = append(ap.removed, o.Path)
	if len(o.Names) == 0 && len(parent.Content) == 0 {
		// The mapping that held the field (a lifecycle, the labels) goes with it.
		if gp, k := at(ap.root, parentPath(o.Path)); gp != nil {
			yamlx.Delete(gp, k)
		}
	}
	return true
}

func (ap *applier) prune(path string) {
	parent, key := at(ap.root, path)
	if parent == nil || !ap.under(path) {
		return
	}
	if n := yamlx.Get(parent, key); n != nil && n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		yamlx.Delete(parent, key)
	}
}

// write executes an OpUpsert or OpSet on the slot's node n.
func write(n *yaml.Node, o Op) bool {
	if o.Kind == OpUpsert {
		if o.Field != "" {
			n = yamlx.EnsureSeq(n, o.Field)
		}
		return upsertIn(n, o.Value)
	}
	if o.Field != "" {
		n = yamlx.Ensure(n, o.Field)
	}
	cur := yamlx.Get(n, o.Key)
	switch {
	case o.When == Absent && cur != nil,
		o.When == OurPreStop && cur != nil && !app.IsOurPreStop(cur),
		cur != nil && yamlx.Equal(cur, o.Value):
		return false
	}
	yamlx.Set(n, o.Key, o.Value)
	return true
}

// removeAt executes one OpRemove on parent[key].
func removeAt(parent *yaml.Node, key string, o Op, removedUnder func(string) bool) bool {
	n := yamlx.Get(parent, key)
	if n == nil {
		return false
	}
	if len(o.Names) == 0 {
		return removeField(parent, key, n, o)
	}
	if n.Kind != yaml.SequenceNode {
		return false
	}
	i := -1
	gone := yamlx.Filter(n, func(e *yaml.Node) bool {
		i++
		if e.Kind != yaml.MappingNode || !slices.Contains(o.Names, yamlx.GetStr(e, "name")) {
			return true
		}
		return o.When == Bare && !(len(e.Content) == 2 && removedUnder(fieldpath.Index(o.Path, i)))
	})
	if gone && len(n.Content) == 0 {
		yamlx.Delete(parent, key)
	}
	return gone
}

// removeField takes out holder[key] when o's condition holds.
func removeField(holder *yaml.Node, key string, n *yaml.Node, o Op) bool {
	switch {
	case o.When == Equal && (n.Kind != yaml.ScalarNode || n.Value != o.Value.Value):
		return false
	case o.When == OurPreStop && !app.IsOurPreStop(n):
		return false
	}
	return yamlx.Delete(holder, key)
}

// at is the mapping holding the field at path and the field's key there; nil when absent,
// when a field on the way has another shape, or when the path ends in an index.
func at(root *yaml.Node, path string) (*yaml.Node, string) {
	segs := fieldpath.Parse(path)
	if len(segs) == 0 || segs[len(segs)-1].Index >= 0 {
		return nil, ""
	}
	n := root
	for _, seg := range segs[:len(segs)-1] {
		if seg.Index >= 0 {
			items := yamlx.Items(n)
			if n == nil || n.Kind != yaml.SequenceNode || seg.Index >= len(items) {
				return nil, ""
			}
			n = items[seg.Index]
			continue
		}
		if n == nil || n.Kind != yaml.MappingNode {
			return nil, ""
		}
		n = yamlx.Get(n, seg.Key)
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, ""
	}
	return n, segs[len(segs)-1].Key
}
