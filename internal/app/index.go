package app

import (
	"errors"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// BuildWith finds the applications in items. opts.SparkConf stands in for spark.properties
// for spark-submit Pods whose ConfigMap is not in the input, and is the base of a workload's
// conf; opts.KubeflowInjection places kubeflow additions (opts.ConfigMap is set here).
//
// It runs in two steps: index the whole input once (the carriers of applications, and what an
// application refers to by name or selector), then build each application from its carrier
// against that index. A new kind of carrier adds to the first step only.
func BuildWith(items []*yaml.RNode, opts CarrierOptions) *Model {
	m := &Model{Items: items, Services: map[string][]*yaml.RNode{}, OperatorServices: map[string]map[string]string{}}
	ix := newIndex(m)
	opts.ConfigMap = func(ns, name string) *yaml.RNode { return ix.configMaps[nsName{ns, name}] }
	for _, rn := range ix.carriers {
		cr, err := DetectCarrier(rn, opts)
		var se *ShapeError
		switch {
		case errors.As(err, &se):
			m.CarrierErrors = append(m.CarrierErrors, CarrierError{rn, se})
		case err != nil:
			m.CarrierErrors = append(m.CarrierErrors, CarrierError{rn, &ShapeError{Msg: err.Error()}})
		case cr == nil:
		case cr.IsHistoryServer():
			m.HistoryServers = append(m.HistoryServers, cr)
		case cr.Has(CapSubmitOutput):
			m.Apps = append(m.Apps, ix.buildPod(cr, opts.SparkConf))
		default:
			m.Apps = append(m.Apps, ix.buildCarrier(cr))
		}
	}
	return m
}

type svcInfo struct {
	rn       *yaml.RNode
	selector map[string]string
}

// kindKey finds what sparkui added for an application: id is identityKey(key, value).
type kindKey struct{ kind, ns, appID string }

// identityKey is how the index keys an application's identity label: the bare app id for
// spark-app-selector (as before carriers existed), "key=value" for any other key (label
// values cannot contain "=", so the two never meet).
func identityKey(key, value string) string {
	if key == names.LabelAppSelector {
		return value
	}
	return key + "=" + value
}

// identities are the identity keys an object sparkui added carries.
func identities(l map[string]string) []string {
	var out []string
	if id := l[names.LabelAppSelector]; id != "" {
		out = append(out, id)
	}
	if n := l[LabelApplication]; n != "" {
		out = append(out, identityKey(LabelApplication, n))
	}
	return out
}

// index is the input, looked up the ways building an application needs, plus the names
// already handed out to the applications built so far.
type index struct {
	// carriers are the objects of a carrier kind, in input order; DetectCarrier reads each
	// once the whole input is indexed.
	carriers   []*yaml.RNode
	configMaps map[nsName]*yaml.RNode

	// Services are indexed once: matching every Pod against every Service is quadratic, and
	// inputs of a thousand applications in one namespace are normal for a platform repo.
	bySelectorApp  map[nsName][]svcInfo // selector has spark-app-selector
	otherSelecting map[string][]svcInfo // selector without it
	ours           map[nsName]*yaml.RNode
	svcByName      map[nsName][]*yaml.RNode

	oursRBAC map[kindKey]*yaml.RNode
	// carrierOurs and carrierOursRBAC list, in input order, every object sparkui added for
	// a carrier identity: two carriers of one name in one namespace (a SparkApplication and a
	// Job called x) share the label sparkui.dev/application=x, and each claims its own in
	// turn (claimed), so a rerun gives each the objects it got the first time.
	carrierOurs     map[nsName][]*yaml.RNode
	carrierOursRBAC map[kindKey][]*yaml.RNode
	claimed         map[*yaml.RNode]bool
	rbacByName      map[nsName][]*yaml.RNode
	// ourRoutes are sparkui's route objects by kind and identity, in input order.
	ourRoutes map[kindKey][]*yaml.RNode

	usedSvc, usedBinder map[nsName]bool

	model *Model
}

// newIndex reads every item once, filling m's input-wide facts (Services, RBAC, Duplicates).
func newIndex(m *Model) *index {
	ix := &index{
		model:           m,
		configMaps:      map[nsName]*yaml.RNode{},
		bySelectorApp:   map[nsName][]svcInfo{},
		otherSelecting:  map[string][]svcInfo{},
		ours:            map[nsName]*yaml.RNode{},
		svcByName:       map[nsName][]*yaml.RNode{},
		oursRBAC:        map[kindKey]*yaml.RNode{},
		carrierOurs:     map[nsName][]*yaml.RNode{},
		carrierOursRBAC: map[kindKey][]*yaml.RNode{},
		claimed:         map[*yaml.RNode]bool{},
		rbacByName:      map[nsName][]*yaml.RNode{},
		ourRoutes:       map[kindKey][]*yaml.RNode{},
		usedSvc:         map[nsName]bool{},
		usedBinder:      map[nsName]bool{},
	}
	type identity struct{ group, kind, ns, name string }
	seen := map[identity]bool{}
	for _, it := range m.Items {
		if it == nil || it.YNode() == nil || it.YNode().Kind != yaml.MappingNode || Ignored(it) {
			continue
		}
		av, kind := kindOf(it)
		ns, name := Meta(it)
		dup := false
		if av == "v1" || av == "rbac.authorization.k8s.io/v1" || carrierKinds[[2]string{av, kind}] != nil {
			// One object per group, kind, namespace and name, whatever its version: Apache's
			// v1 and v1beta1 SparkApplication x are one object to the API server.
			group, _, versioned := strings.Cut(av, "/")
			if !versioned {
				group = "" // core: "v1"
			}
			id := identity{group, kind, ns, name}
			if dup = seen[id]; dup {
				m.Duplicates = append(m.Duplicates, it)
			}
			seen[id] = true
		}
		switch {
		case dup && carrierKinds[[2]string{av, kind}] != nil:
			// A later copy of a carrier is no second application (two UI Services, two
			// runtimes for one object): the first is rewritten, this one is left as it is and
			// reported (SUI019).
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
		case carrierKinds[[2]string{av, kind}] != nil:
			ix.carriers = append(ix.carriers, it)
			if p := carrierKinds[[2]string{av, kind}]; p.operatorServices != nil && name != "" {
				for svc, who := range p.operatorServices(it, name) {
					if m.OperatorServices[ns] == nil {
						m.OperatorServices[ns] = map[string]string{}
					}
					m.OperatorServices[ns][svc] = who
				}
			}
		case isRouteObject(av, kind):
			ix.indexRoute(it, kind, ns)
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
			for _, id := range identities(l) {
				k := kindKey{yamlx.GetStr(r.YNode(), "kind"), ns, id}
				if ix.oursRBAC[k] == nil {
					ix.oursRBAC[k] = r
				}
				ix.carrierOursRBAC[k] = append(ix.carrierOursRBAC[k], r)
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
		for _, id := range identities(l) {
			if ix.ours[nsName{ns, id}] == nil {
				ix.ours[nsName{ns, id}] = svc
			}
			ix.carrierOurs[nsName{ns, id}] = append(ix.carrierOurs[nsName{ns, id}], svc)
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

// claim is the first of objs no application has claimed yet, now claimed; nil if none.
func (ix *index) claim(objs []*yaml.RNode) *yaml.RNode {
	for _, o := range objs {
		if !ix.claimed[o] {
			ix.claimed[o] = true
			return o
		}
	}
	return nil
}
