package app

import (
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Where the function writes in a carrier: the slots, per route.

// Slot is a place in the carrier where a pod-level addition goes.
type Slot int

const (
	// SlotPodSpec is the driver's pod spec (hostNetwork, serviceAccountName, …). The webhook
	// route has none to write to.
	SlotPodSpec Slot = iota
	// SlotInitContainers is the sequence the runtime sidecar is appended to.
	SlotInitContainers
	// SlotVolumes is the sequence of pod volumes. On the kubeflow webhook injection the
	// webhook adds a volume only if the driver mounts it (SlotDriverContainer's
	// volumeMounts): a volume used only by the sidecar is never added.
	SlotVolumes
	// SlotDriverContainer is the driver container's mapping (its lifecycle and
	// volumeMounts). On the kubeflow webhook injection it is spec.driver, whose lifecycle
	// replaces the Spark container's whole lifecycle.
	SlotDriverContainer
	// SlotPodLabels is the driver Pod's metadata.labels (kubeflow webhook injection:
	// spec.driver.labels, which the operator turns into spark.kubernetes.driver.label.*).
	SlotPodLabels
)

// Lookup returns the node of a slot and its field path, nil when absent (the path is then
// where Ensure would put it); an error when a field on the way has the wrong shape.
func (c *Carrier) Lookup(s Slot) (*yaml.Node, string, error) { return c.slot(s, false) }

// Ensure returns the node of a slot and its field path, creating what is missing on the way
// (a kubeflow driver template, an Apache podTemplateSpec, a driver container where the
// operator supplies it).
func (c *Carrier) Ensure(s Slot) (*yaml.Node, string, error) { return c.slot(s, true) }

// PathPrefix is the field path of the driver's pod spec for results, e.g.
// "spec.driver.template.spec" (field paths of additions are this + ".initContainers[0]"),
// or of spec.driver on the kubeflow webhook injection.
func (c *Carrier) PathPrefix() string {
	if c.ViaWebhook() {
		_, p, _ := c.profile.webhookSlot(c, SlotDriverContainer, false)
		return p
	}
	return joinPath(c.podSpecPath()...)
}

// slot resolves a slot and checks the shape of what transform writes into it, so that no
// writer ever replaces a field of another shape (a volumeMounts mapping, a lifecycle string):
// every writer reaches the carrier through here.
func (c *Carrier) slot(s Slot, create bool) (*yaml.Node, string, error) {
	n, path, err := c.resolveSlot(s, create)
	if err == nil && n != nil && s == SlotDriverContainer {
		err = c.checkContainerFields(n, path)
	}
	if err != nil {
		return nil, "", err
	}
	return n, path, nil
}

// containerFields are the fields of the driver container (spec.driver on the kubeflow
// webhook injection) transform writes into: its mount of the runtime's volume and its preStop
// hook (and its ports, checkPorts). A null counts as absent (the API server reads it so).
var containerFields = []struct {
	key  string
	kind yaml.Kind
}{{"volumeMounts", yaml.SequenceNode}, {"lifecycle", yaml.MappingNode}}

func (c *Carrier) checkContainerFields(ctr *yaml.Node, path string) error {
	for _, f := range containerFields {
		v := yamlx.Get(ctr, f.key)
		if yamlx.IsNull(v) || v.Kind == f.kind {
			continue
		}
		want := "a list"
		if f.kind == yaml.MappingNode {
			want = "a mapping"
		}
		return c.shapeErr(path+"."+f.key, "is "+yamlx.Shape(v)+", want "+want)
	}
	return c.checkPorts(ctr, path)
}

// checkPorts: transform drops the driver's ports whose containerPort is 0 (the API server's
// "Required value"), so every other entry must be one it can read: a containerPort that is not
// an integer ("nine", 9090.0) or missing is named here, never taken for a 0 and dropped.
func (c *Carrier) checkPorts(ctr *yaml.Node, path string) error {
	ports := yamlx.Get(ctr, "ports")
	if yamlx.IsNull(ports) {
		return nil
	}
	path += ".ports"
	if ports.Kind != yaml.SequenceNode {
		return c.shapeErr(path, "is "+yamlx.Shape(ports)+", want a list")
	}
	for i, p := range ports.Content {
		if p.Kind != yaml.MappingNode {
			return c.shapeErr(indexPath(path, i), "is "+yamlx.Shape(p)+", want a mapping")
		}
		cp := yamlx.Get(p, "containerPort")
		if yamlx.IsNull(cp) {
			return c.shapeErr(indexPath(path, i)+".containerPort", "is missing, want an integer")
		}
		if _, ok := yamlx.Port(cp); !ok {
			return c.shapeErr(indexPath(path, i)+".containerPort", "is "+yamlx.Shape(cp)+", want an integer")
		}
	}
	return nil
}

// CheckSlots resolves every slot without creating anything: an error is the first field
// sparkui would write into whose shape is not its schema's. Detection runs it, so such a
// carrier becomes a carrier error (SUI030) and is written back as it came.
func (c *Carrier) CheckSlots() error {
	for _, s := range []Slot{SlotPodSpec, SlotPodLabels, SlotInitContainers, SlotVolumes, SlotDriverContainer} {
		if _, _, err := c.Lookup(s); err != nil && !errors.Is(err, ErrNoPodSpec) {
			return err
		}
	}
	return nil
}

func (c *Carrier) resolveSlot(s Slot, create bool) (*yaml.Node, string, error) {
	if c.ViaWebhook() {
		return c.profile.webhookSlot(c, s, create)
	}
	switch s {
	case SlotPodSpec:
		return c.walk(create, c.podSpecPath()...)
	case SlotInitContainers:
		return c.walkSeq(create, append(c.podSpecPath(), "initContainers")...)
	case SlotVolumes:
		return c.walkSeq(create, append(c.podSpecPath(), "volumes")...)
	case SlotPodLabels:
		return c.walk(create, append(c.podMetaPath(), "labels")...)
	case SlotDriverContainer:
		return c.driverContainer(create)
	}
	return nil, "", fmt.Errorf("app: unknown slot %d", s)
}

// podSpecPath is the path of the driver's pod spec.
func (c *Carrier) podSpecPath() []string {
	return cat(c.base, c.profile.podSpec...)
}

func (c *Carrier) podMetaPath() []string {
	p := c.podSpecPath()
	return append(p[:len(p)-1:len(p)-1], "metadata")
}

// driverContainer finds the container Spark (or the workload) runs the driver in: the one
// named by the carrier's container name, else the first (Spark's
// KubernetesUtils.selectSparkContainer falls back to the first container). With create and
// no container in an operator's template, it adds one named spark-kubernetes-driver, which
// the operator fills in (kubeflow's buildDriverPodTemplate default template has exactly
// that container; Spark keeps a template container's lifecycle).
func (c *Carrier) driverContainer(create bool) (*yaml.Node, string, error) {
	specPath := c.podSpecPath()
	cs, path, err := c.walkSeq(false, append(specPath, "containers")...)
	if err != nil {
		return nil, "", err
	}
	want := c.driverContainerName()
	items := yamlx.Items(cs)
	if len(items) > 0 && c.pinsFirst() {
		// Without the key Spark takes the first container (selectSparkContainer), and
		// transform pins its name (transform/pin.go): the same container before and after.
		want = PinnedContainerName(items[0])
	}
	for i, ctr := range items {
		if ctr.Kind != yaml.MappingNode {
			return nil, "", c.shapeErr(indexPath(path, i), "is not a mapping")
		}
		if yamlx.GetStr(ctr, "name") == want {
			return ctr, indexPath(path, i), nil
		}
	}
	if len(items) > 0 {
		return items[0], indexPath(path, 0), nil
	}
	if !create {
		return nil, indexPath(path, 0), nil
	}
	if !c.OperatorFillsContainer() {
		// The workload or Pod runs nothing without a container: inventing one would
		// invent the driver.
		return nil, "", c.shapeErr(path, "has no container to run the driver in")
	}
	cs, path, err = c.walkSeq(true, append(specPath, "containers")...)
	if err != nil {
		return nil, "", err
	}
	name := names.DriverContainer
	if c.profile.container != "" {
		name = c.profile.container
	}
	ctr := yamlx.NewMap("name", name)
	cs.Content = append(cs.Content, ctr)
	return ctr, indexPath(path, 0), nil
}

// driverContainerName is the container name the carrier's driver is matched by: the
// adapter's (Spark's default spark-kubernetes-driver unless it names another), or the conf's
// spark.kubernetes.driver.podTemplateContainerName where the adapter says the conf names it.
// pinsFirst reports a carrier whose driver container transform pins in the conf, which does
// not name it yet.
func (c *Carrier) pinsFirst() bool {
	_, set := c.Conf[KeyPodTemplateCtr]
	return c.Has(CapPinContainer) && !set
}

// PinnedContainerName is the name Spark gives the driver container first (a template's first
// container): its own, or spark-kubernetes-driver when it has none (BasicDriverFeatureStep).
func PinnedContainerName(first *yaml.Node) string {
	if n := yamlx.GetStr(first, "name"); n != "" {
		return n
	}
	return names.DriverContainer
}

func (c *Carrier) driverContainerName() string {
	if c.profile.containerFromConf {
		if n := c.Conf[KeyPodTemplateCtr]; n != "" {
			return n
		}
	}
	if c.profile.container != "" {
		return c.profile.container
	}
	return names.DriverContainer
}

// PreparedSlots are the places transform writes into a carrier: the pod labels, init
// containers and volumes, and the driver container unless the operator owns its lifecycle
// (nothing is written there then, so none is made up).
func (c *Carrier) PreparedSlots() []Slot {
	slots := []Slot{SlotPodLabels, SlotInitContainers, SlotVolumes, SlotDriverContainer}
	if c.OperatorOwnsLifecycle() {
		return slots[:3]
	}
	return slots
}

// Writable says why transform would add nothing to this carrier (a field of the wrong shape
// on the way to a slot, or a pod template with no container to run the driver in), nil when
// it can write every slot. It only looks: transform's preparePlan and validate mode's
// SUI060 (which must not tell the user to run a transform that would refuse) share it.
func (c *Carrier) Writable() error {
	for _, s := range c.PreparedSlots() {
		n, path, err := c.Lookup(s)
		if err != nil {
			return err
		}
		if s == SlotDriverContainer && n == nil && !c.OperatorFillsContainer() {
			return &ShapeError{APIVersion: c.APIVersion, Kind: c.ObjectKind, Namespace: c.Namespace, Name: c.Name,
				Field: path, Msg: "is missing: the pod template has no container to run the driver in"}
		}
	}
	return nil
}
