package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// ConfOp sets a Spark property where the application's conf is written (an operator's
// sparkConf field, or a spark-submit driver's spark.properties); an empty Value takes it out.
type ConfOp struct{ Key, Value string }

func (o ConfOp) String() string {
	if o.Value == "" {
		return "conf remove " + o.Key
	}
	return "conf set " + o.Key + " = " + o.Value
}

// applyConf executes ops on the conf mapping at confPath of obj, created when absent (the
// field is written even when only removals are planned, as a map of strings it always is).
func applyConf(obj *yaml.Node, confPath string, ops []ConfOp) bool {
	if removalsOnly(ops) {
		return removeConf(obj, confPath, ops)
	}
	conf := obj
	for _, seg := range fieldpath.Parse(confPath) {
		conf = yamlx.Ensure(conf, seg.Key)
	}
	changed := false
	for _, o := range ops {
		if o.Value == "" {
			changed = yamlx.Delete(conf, o.Key) || changed
			continue
		}
		changed = yamlx.SetIfChanged(conf, o.Key, yamlx.NewStr(o.Value)) || changed
	}
	return changed
}

// applyProperties executes ops on the spark.properties text of a driver ConfigMap, rewriting
// it only when a property changed.
func applyProperties(cm *yaml.Node, ops []ConfOp) bool {
	data := yamlx.Get(cm, "data")
	text := yamlx.Str(yamlx.Get(data, names.SparkPropertiesKey))
	changed := false
	for _, o := range ops {
		var c bool
		text, c = sparkconf.Set(text, o.Key, o.Value)
		changed = changed || c
	}
	if changed {
		yamlx.Set(data, names.SparkPropertiesKey, yamlx.NewStr(text))
	}
	return changed
}

func removalsOnly(ops []ConfOp) bool {
	for _, o := range ops {
		if o.Value != "" {
			return false
		}
	}
	return true
}

// removeConf takes the keys of ops (removals alone, UninstallPlans') out of the conf mapping
// at confPath, which it never creates, and deletes that mapping when the removal empties it:
// the conf field transform created for the keys it wrote goes with them (one empty before is
// the user's and stays).
func removeConf(obj *yaml.Node, confPath string, ops []ConfOp) bool {
	segs := fieldpath.Parse(confPath)
	if len(segs) == 0 {
		return false
	}
	parent := obj
	for _, seg := range segs[:len(segs)-1] {
		if parent = yamlx.Get(parent, seg.Key); parent == nil {
			return false
		}
	}
	last := segs[len(segs)-1].Key
	conf := yamlx.Get(parent, last)
	changed := false
	for _, o := range ops {
		changed = yamlx.Delete(conf, o.Key) || changed
	}
	if changed && conf.Kind == yaml.MappingNode && len(conf.Content) == 0 {
		yamlx.Delete(parent, last)
	}
	return changed
}
