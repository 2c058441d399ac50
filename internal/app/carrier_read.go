package app

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Reading a carrier's fields with their shapes checked, for arbitrary input.

// walk follows keys from the object's root. A missing step (or an explicit null) gives nil,
// or with create a new empty mapping; a step that exists with another shape is a
// ShapeError naming it.
func (c *Carrier) walk(create bool, keys ...string) (*yaml.Node, string, error) {
	n := c.Object.YNode()
	for i, k := range keys {
		next := yamlx.Get(n, k)
		if yamlx.IsNull(next) {
			if !create {
				return nil, joinPath(keys...), nil
			}
			next = yamlx.NewMap()
			yamlx.Set(n, k, next)
		} else if next.Kind != yaml.MappingNode {
			return nil, "", c.shapeErr(joinPath(keys[:i+1]...), "is "+yamlx.Shape(next)+", want a mapping")
		}
		n = next
	}
	return n, joinPath(keys...), nil
}

// walkSeq is walk whose last step is a sequence.
func (c *Carrier) walkSeq(create bool, keys ...string) (*yaml.Node, string, error) {
	parent, _, err := c.walk(create, keys[:len(keys)-1]...)
	path := joinPath(keys...)
	if err != nil || parent == nil {
		return nil, path, err
	}
	last := keys[len(keys)-1]
	s := yamlx.Get(parent, last)
	if yamlx.IsNull(s) {
		if !create {
			return nil, path, nil
		}
		s = yamlx.NewSeq()
		yamlx.Set(parent, last, s)
	} else if s.Kind != yaml.SequenceNode {
		return nil, "", c.shapeErr(path, "is "+yamlx.Shape(s)+", want a list")
	}
	return s, path, nil
}

// readStringMap reads a map of strings (sparkConf, labels): absent is empty; a non-mapping
// or a non-scalar value is a ShapeError.
func (c *Carrier) readStringMap(keys ...string) (map[string]string, error) {
	n, path, err := c.walk(false, keys...)
	if err != nil || n == nil {
		return map[string]string{}, err
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, c.shapeErr(path, "has a key that is not a string")
		}
		if v.Kind != yaml.ScalarNode {
			return nil, c.shapeErr(fieldpath.Key(path, k.Value), "is "+yamlx.Shape(v)+", want a string")
		}
		m[k.Value] = v.Value
	}
	return m, nil
}

// readScalar reads a scalar field ("" when absent); another shape is a ShapeError.
func (c *Carrier) readScalar(keys ...string) (string, error) {
	parent, _, err := c.walk(false, keys[:len(keys)-1]...)
	if err != nil || parent == nil {
		return "", err
	}
	v := yamlx.Get(parent, keys[len(keys)-1])
	if yamlx.IsNull(v) {
		return "", nil
	}
	if v.Kind != yaml.ScalarNode {
		return "", c.shapeErr(joinPath(keys...), "is "+yamlx.Shape(v)+", want a scalar")
	}
	return v.Value, nil
}

// readInt reads an integer field; def when absent.
func (c *Carrier) readInt(def int, keys ...string) (int, error) {
	s, err := c.readScalar(keys...)
	if err != nil || s == "" {
		return def, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, c.shapeErr(joinPath(keys...), fmt.Sprintf("is %q, want an integer", s))
	}
	return n, nil
}

// readBool reads a boolean field; false when absent.
func (c *Carrier) readBool(keys ...string) (bool, error) {
	s, err := c.readScalar(keys...)
	if err != nil || s == "" {
		return false, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, c.shapeErr(joinPath(keys...), fmt.Sprintf("is %q, want true or false", s))
}

// readPodSpecFacts reads what every pod-template carrier shares: ServiceAccount and
// hostNetwork from the pod spec, after checking the containers' shape.
func (c *Carrier) readPodSpecFacts() (sa, saPath string, hostNetwork bool, err error) {
	if _, _, err := c.walk(false, append(c.podMetaPath(), "labels")...); err != nil {
		return "", "", false, err
	}
	spec, specPath, err := c.walk(false, c.podSpecPath()...)
	if err != nil || spec == nil {
		return "", "", false, err
	}
	p := c.podSpecPath()
	for _, list := range []string{"containers", "initContainers", "volumes"} {
		if _, _, err := c.walkSeq(false, append(p, list)...); err != nil {
			return "", "", false, err
		}
	}
	if hostNetwork, err = c.readBool(append(p, "hostNetwork")...); err != nil {
		return "", "", false, err
	}
	for _, k := range []string{"serviceAccountName", "serviceAccount"} {
		v, err := c.readScalar(append(p, k)...)
		if err != nil {
			return "", "", false, err
		}
		if v != "" {
			return v, specPath + "." + k, hostNetwork, nil
		}
	}
	return "", "", hostNetwork, nil
}

// readIPFamilies reads Spark's IP family settings from Conf. Spark splits ipFamilies on
// commas (KubernetesConf's KUBERNETES_DRIVER_SERVICE_IP_FAMILIES is a toSequence conf).
func (c *Carrier) readIPFamilies() {
	c.IPFamilyPolicy = strings.TrimSpace(c.Conf[KeyIPFamilyPolicy])
	c.IPFamilies = nil
	for _, f := range strings.Split(c.Conf[KeyIPFamilies], ",") {
		if f = strings.TrimSpace(f); f != "" {
			c.IPFamilies = append(c.IPFamilies, f)
		}
	}
}

func (c *Carrier) shapeErr(field, msg string) *ShapeError {
	return &ShapeError{APIVersion: c.APIVersion, Kind: c.ObjectKind, Namespace: c.Namespace, Name: c.Name, Field: field, Msg: msg}
}

func joinPath(keys ...string) string { return strings.Join(keys, ".") }

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// cat copies base and appends more, so callers never share a backing array.
func cat(base []string, more ...string) []string {
	out := make([]string, 0, len(base)+len(more))
	return append(append(out, base...), more...)
}
