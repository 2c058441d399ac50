package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/sparkconf"
)

// change is one field of a carrier's spec that differs between two renderings: its result
// path (in the new rendering where the field is there, else in the old) and whether sparkui
// writes it.
type change struct {
	Path    string
	Sparkui bool
}

// sparkuiItems are the names of the list entries sparkui adds to a pod spec (the runtime
// container, its volumes and mounts): a change inside one is sparkui's.
// (the runtime container and its volume share one name.)
var sparkuiItems = map[string]bool{sidecar.ContainerName: true, sidecar.AuthVolumeName: true}

// sparkuiKeys are the map keys sparkui writes into what the user owns: conf keys (a route's
// proxyBase and redirect URI, the Apache operator's pinned container name) and labels.
var sparkuiKeys = map[string]bool{sparkconf.KeyProxyBase: true, sparkconf.KeyProxyRedirectURI: true,
	app.KeyPodTemplateCtr: true, names.LabelManagedBy: true}

// diffSpec lists the fields of spec that differ between old and new, each as deep as the
// difference goes: lists whose entries all have a name are matched by name (containers,
// volumes, env), as the API server's strategic merge and Kubernetes' list-map keys do, so
// an entry inserted before others is one change, not a change of every later index.
func diffSpec(old, new *yaml.Node) []change {
	var out []change
	diffNode("spec", old, new, false, &out)
	return out
}

func diffNode(path string, a, b *yaml.Node, ours bool, out *[]change) {
	a, b = deref(a), deref(b)
	switch {
	case a == nil && b == nil:
		return
	case a == nil || b == nil || a.Kind != b.Kind:
		*out = append(*out, change{Path: path, Sparkui: ours || isSparkuiHook(a) || isSparkuiHook(b)})
	case a.Kind == yaml.MappingNode:
		keys := []string{}
		am, bm := mapping(a), mapping(b)
		for i := 0; i+1 < len(b.Content); i += 2 {
			keys = append(keys, b.Content[i].Value)
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			if _, ok := bm[a.Content[i].Value]; !ok {
				keys = append(keys, a.Content[i].Value)
			}
		}
		for _, k := range keys {
			mine := sparkuiKeys[k] || strings.HasPrefix(k, names.AnnotationPrefix) ||
				(k == "lifecycle" && (isSparkuiHook(am[k]) || isSparkuiHook(bm[k])))
			diffNode(fieldpath.Key(path, k), am[k], bm[k], ours || mine, out)
		}
	case a.Kind == yaml.SequenceNode:
		an, aok := named(a)
		bn, bok := named(b)
		if !aok || !bok {
			for i := 0; i < max(len(a.Content), len(b.Content)); i++ {
				diffNode(fieldpath.Index(path, i), at(a, i), at(b, i), ours, out)
			}
			return
		}
		for i, n := range b.Content {
			name := nameOf(n)
			diffNode(fieldpath.Index(path, i), an[name], n, ours || sparkuiItems[name], out)
		}
		for i, n := range a.Content {
			if name := nameOf(n); bn[name] == nil {
				diffNode(fieldpath.Index(path, i), n, nil, ours || sparkuiItems[name], out)
			}
		}
	default:
		if a.Value != b.Value {
			*out = append(*out, change{Path: path, Sparkui: ours})
		}
	}
}

// isSparkuiHook: a driver container's preStop (or lifecycle) that sparkui wrote, which runs
// the runtime's binary from its mount: the only field sparkui writes in a container it does
// not own.
func isSparkuiHook(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	s, err := yaml.NewRNode(n).String()
	return err == nil && strings.Contains(s, sidecar.MountPath+"/")
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

func mapping(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

// named indexes a list's entries by their name, false when one has none or two share one.
func named(n *yaml.Node) (map[string]*yaml.Node, bool) {
	m := map[string]*yaml.Node{}
	for _, e := range n.Content {
		name := nameOf(e)
		if name == "" || m[name] != nil {
			return nil, false
		}
		m[name] = e
	}
	return m, len(m) > 0
}

func nameOf(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	if v := deref(mapping(n)["name"]); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func at(n *yaml.Node, i int) *yaml.Node {
	if i < len(n.Content) {
		return n.Content[i]
	}
	return nil
}
