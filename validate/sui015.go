package validate

import (
	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
)

// checkSUI015: an unreadable spark.properties or a bad port setting fails the driver at
// start (Spark throws on it), and sparkui cannot know which port to expect.
func checkSUI015(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.ConfError != nil {
			out = append(out, Finding{Object: a.ConfigMap, Field: DataKeyPath(names.SparkPropertiesKey),
				Msg: "spark.properties of " + objName(a.ConfigMap) + " is unreadable: " + a.ConfError.Msg})
		}
		for _, e := range a.SettingErrors {
			if a.ConfSource == app.FromConfigMap {
				out = append(out, Finding{Object: a.ConfigMap, Field: DataKeyPath(names.SparkPropertiesKey),
					Msg: "in spark.properties of " + objName(a.ConfigMap) + ": " + e.Error()})
			} else {
				out = append(out, Finding{Object: a.Pod, Field: "",
					Msg: "functionConfig spec.sparkConf: " + e.Error()})
			}
		}
	}
	return out
}
