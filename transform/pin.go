package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// PinDriverContainer sets spark.kubernetes.driver.podTemplateContainerName on an Apache
// carrier whose template has containers and whose sparkConf lacks the key, to the name Spark
// will give the driver container: the first container's (the operator does not set the key,
// so Spark's selectSparkContainer takes the first container, and BasicDriverFeatureStep
// keeps its name, or names it spark-kubernetes-driver when it has none). With the key set,
// the operator's ModelUtils.findDriverMainContainerStatus watches that container only
// instead of treating every container as a main one. It reports whether it changed the
// object; on other carriers it does nothing.
func PinDriverContainer(c *app.Carrier) (bool, error) {
	if !c.PinsDriverContainer() {
		return false, nil
	}
	if _, set := c.Conf[app.KeyPodTemplateCtr]; set {
		return false, nil
	}
	spec, specPath, err := c.Lookup(app.SlotPodSpec)
	if err != nil {
		return false, err
	}
	cs := yamlx.Items(yamlx.Get(spec, "containers"))
	if len(cs) == 0 {
		return false, nil
	}
	first := cs[0]
	if first.Kind != yaml.MappingNode {
		return false, &app.ShapeError{APIVersion: c.APIVersion, Kind: c.ObjectKind, Namespace: c.Namespace, Name: c.Name,
			Field: fieldpath.Index(fieldpath.Key(specPath, "containers"), 0), Msg: "is not a mapping"}
	}
	name := yamlx.GetStr(first, "name")
	if name == "" {
		name = names.DriverContainer
	}
	// The conf's shape was checked when the carrier was read (a mapping of strings, or absent).
	conf := c.Object.YNode()
	for _, seg := range fieldpath.Parse(c.ConfPath) {
		conf = yamlx.Ensure(conf, seg.Key)
	}
	yamlx.Set(conf, app.KeyPodTemplateCtr, yamlx.NewStr(name))
	// Later slot lookups select the driver container by this name, as Spark will.
	c.Conf[app.KeyPodTemplateCtr] = name
	return true, nil
}
