package app

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Build finds the applications in items. sparkConf stands in for spark.properties for
// applications whose ConfigMap is not in the input.
//
// It runs in two steps: index the whole input once (the carriers of applications, and what an
// application refers to by name or selector), then build each application from its carrier
// against that index. A new kind of carrier adds to the first step only.
func Build(items []*yaml.RNode, sparkConf map[string]string) *Model {
	m := &Model{Items: items, Services: map[string][]*yaml.RNode{}}
	ix := newIndex(m)
	for _, c := range ix.carriers {
		m.Apps = append(m.Apps, ix.build(c, sparkConf))
	}
	return m
}

// carrier is where one application was found: the object holding the driver's pod spec, and
// the driver's namespace, name and labels. Only spark-submit's driver Pod is one today, its
// pod spec its own.
type carrier struct {
	object          *yaml.RNode
	namespace, name string
	podSpec         *yaml.Node
	labels          map[string]string
}

func podCarrier(pod *yaml.RNode) carrier {
	c := carrier{object: pod, podSpec: yamlx.Get(pod.YNode(), "spec"), labels: Labels(pod)}
	c.namespace, c.name = Meta(pod)
	return c
}

type svcInfo struct {
	rn       *yaml.RNode
	selector map[string]string
}

type kindKey struct{ kind, ns, appID string }

// index is the input, looked up the ways building an application needs, plus the names
// already handed out to the applications built so far.
type index struct {
	carriers   []carrier
	configMaps map[nsName]*yaml.RNode

	// Services are indexed once: matching every Pod against every Service is quadratic, and
	// inputs of a thousand applications in one namespace are normal for a platform repo.
	bySelectorApp  map[nsName][]svcInfo // selector has spark-app-selector
	otherSelecting map[string][]svcInfo // selector without it
	ours           map[nsName]*yaml.RNode
	svcByName      map[nsName][]*yaml.RNode

	oursRBAC   map[kindKey]*yaml.RNode
	rbacByName map[nsName][]*yaml.RNode

	usedSvc, usedBinder map[nsName]bool
}

// newIndex reads every item once, filling m's input-wide facts (Services, RBAC, Duplicates).
func newIndex(m *Model) *index {
	ix := &index{
		configMaps:     map[nsName]*yaml.RNode{},
		bySelectorApp:  map[nsName][]svcInfo{},
		otherSelecting: map[string][]svcInfo{},
		ours:           map[nsName]*yaml.RNode{},
		svcByName:      map[nsName][]*yaml.RNode{},
		oursRBAC:       map[kindKey]*yaml.RNode{},
		rbacByName:     map[nsName][]*yaml.RNode{},
		usedSvc:        map[nsName]bool{},
		usedBinder:     map[nsName]bool{},
	}
	type identity struct{ group, kind, ns, name string }
	seen := map[identity]bool{}
	for _, it := range m.Items {
		if it == nil || it.YNode() == nil || it.YNode().Kind != yaml.MappingNode || Ignored(it) {
			continue
		}
		av, kind := kindOf(it)
		ns, name := Meta(it)
		if av == "v1" || av == "rbac.authorization.k8s.io/v1" {
			id := identity{av, kind, ns, name}
			if seen[id] {
				m.Duplicates = append(m.Duplicates, it)
			}
			seen[id] = true
		}
		switch {
		case av == "v1" && kind == "Pod":
			if Labels(it)[names.LabelSparkRole] == names.RoleDriver {
				ix.carriers = append(ix.carriers, podCarrier(it))
			}
		case av == "v1" && kind == "Service":
			m.Services[ns] = append(m.Services[ns], it)
		case av == "v1" && kind == "ConfigMap":
			ix.configMaps[nsName{ns, name}] = it
			// kustomize runs transformers before it fixes name references: after a namePrefix
			// the Pod still mounts the old name, which kustomize keeps in this annotation.
			for _, prev := range previousNames(it) {
				if ix.configMaps[prev] == nil {
					ix.configMaps[prev] = it
				}
			}
		case av == "rbac.authorization.k8s.io/v1":
			switch kind {
			case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
				m.RBAC = append(m.RBAC, it)
			}
		}
	}
	for ns, svcs := range m.Services {
		for _, svc := range svcs {
			ix.addService(ns, svc)
		}
	}
	for _, r := range m.RBAC {
		ns, name := Meta(r)
		ix.rbacByName[nsName{ns, name}] = append(ix.rbacByName[nsName{ns, name}], r)
		l := Labels(r)
		if l[names.LabelManagedBy] == names.ManagedByValue {
			k := kindKey{yamlx.GetStr(r.YNode(), "kind"), ns, l[names.LabelAppSelector]}
			if ix.oursRBAC[k] == nil {
				ix.oursRBAC[k] = r
			}
		}
	}
	return ix
}

func (ix *index) addService(ns string, svc *yaml.RNode) {
	_, name := Meta(svc)
	ix.svcByName[nsName{ns, name}] = append(ix.svcByName[nsName{ns, name}], svc)
	l := Labels(svc)
	if l[names.LabelManagedBy] == names.ManagedByValue {
		if id := l[names.LabelAppSelector]; id != "" && ix.ours[nsName{ns, id}] == nil {
			ix.ours[nsName{ns, id}] = svc
		}
		return
	}
	sel := yamlx.StringMap(yamlx.Get(svc.YNode(), "spec", "selector"))
	if len(sel) == 0 {
		return
	}
	if id, ok := sel[names.LabelAppSelector]; ok {
		ix.bySelectorApp[nsName{ns, id}] = append(ix.bySelectorApp[nsName{ns, id}], svcInfo{svc, sel})
	} else {
		ix.otherSelecting[ns] = append(ix.otherSelecting[ns], svcInfo{svc, sel})
	}
}
