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
