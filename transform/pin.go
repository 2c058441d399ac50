package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// PinConf is the conf operation that sets spark.kubernetes.driver.podTemplateContainerName on
// an Apache carrier whose template has containers and whose sparkConf lacks the key, to the
// name Spark will give the driver container: the first container's (the operator does not set
// the key, so Spark's selectSparkContainer takes the first container, and
// BasicDriverFeatureStep keeps its name, or names it spark-kubernetes-driver when it has none).
// With the key set, the operator's ModelUtils.findDriverMainContainerStatus watches that
// container only instead of treating every container as a main one. Slot lookups already
// select that container (app.PinnedContainerName), so nothing read from the carrier changes.
// None on other carriers. prepared says the plan makes the driver container where the
// template has none (AppPlan.Prepare): it is then named spark-kubernetes-driver, and pinned.
func PinConf(c *app.Carrier, prepared bool) ([]ConfOp, error) {
	if !c.PinsDriverContainer() {
		return nil, nil
	}
	if _, set := c.Conf[app.KeyPodTemplateCtr]; set {
		return nil, nil
	}
	spec, specPath, err := c.Lookup(app.SlotPodSpec)
	if err != nil {
		return nil, err
	}
	cs := yamlx.Items(yamlx.Get(spec, "containers"))
	if len(cs) == 0 {
		if prepared && c.OperatorFillsContainer() {
			return []ConfOp{{Key: app.KeyPodTemplateCtr, Value: names.DriverContainer}}, nil
		}
		return nil, nil
	}
	if cs[0].Kind != yaml.MappingNode {
		return nil, &app.ShapeError{APIVersion: c.APIVersion, Kind: c.ObjectKind, Namespace: c.Namespace, Name: c.Name,
			Field: fieldpath.Index(fieldpath.Key(specPath, "containers"), 0), Msg: "is not a mapping"}
	}
	return []ConfOp{{Key: app.KeyPodTemplateCtr, Value: app.PinnedContainerName(cs[0])}}, nil
}

// PinDriverContainer executes PinConf on c's object and reports whether it changed it.
func PinDriverContainer(c *app.Carrier) (bool, error) {
	ops, err := PinConf(c, false)
	if err != nil || len(ops) == 0 {
		return false, err
	}
	return applyConf(c.Object.YNode(), c.ConfPath, ops), nil
}
