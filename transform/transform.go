// Package transform rewrites Spark driver manifests: it drops the zero ports the API server
// rejects and adds, for each application, the selectorless UI Service, the RBAC that lets the
// runtime bind it, and the runtime sidecar with its withdrawal hook. Every step edits nodes in
// place, only where they differ from what is wanted, so output is idempotent and keeps the
// input's order and comments.
package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Options are the functionConfig settings the rewrite needs.
type Options struct {
	ServiceEnabled bool
	ServiceType    string // ClusterIP | NodePort | LoadBalancer
	ServicePort    int    // 0 = derived from the Spark settings
	ExternalURI    sidecar.ExternalURIMode
	RuntimeImage   string
	CreateRBAC     bool
	// RuntimeAuth is the credential the runtime sends to a UI behind spark.ui.filters, from
	// a Secret in the application's namespace; zero: none.
	RuntimeAuth sidecar.Auth
	// NoEvents is runtime.events: false: the runtime is told --events=false and the Role
	// has no events rule.
	NoEvents bool
	// Route is the route to each application's UI Service (spec.route).
	Route RouteOptions
	// History is the History Server hand-off (historyServer): passed to the runtime as env
	// when its URL is set.
	History sidecar.History
}

// Note is something the rewrite did that a user should hear about.
type Note struct {
	App    *app.App
	Object *yaml.RNode
	Rule   string
	Msg    string
	// Error marks a note that is an error (the rewrite could not be done), not information;
	// Field is then the field at fault. Warning marks one about a value of the user's that
	// the rewrite replaced.
	Error, Warning bool
	Field          string
}

// Apply rewrites every application of m and returns the resulting item list: the input
// items in order (minus the objects the plans remove: a UI Service whose UI is disabled, a
// route sparkui no longer wants) followed by the objects added, application by application.
// Every application is planned (PlanApps) before any is applied, so a plan reads the input
// as it came.
func Apply(m *app.Model, o Options) ([]*yaml.RNode, []Note) {
	return run(m, PlanApps(m, o))
}

// run executes plans, computed on m as it came, and returns the resulting item list.
func run(m *app.Model, plans []*AppPlan) ([]*yaml.RNode, []Note) {
	var added []*yaml.RNode
	var notes []Note
	removed := map[*yaml.RNode]bool{}
	for _, p := range plans {
		notes = append(notes, p.apply()...)
		if p.Err != nil {
			continue
		}
		added = append(added, p.Add...)
		for _, rn := range p.Remove {
			removed[rn] = true
		}
	}
	if len(removed) == 0 && len(added) == 0 {
		return m.Items, notes
	}
	out := make([]*yaml.RNode, 0, len(m.Items)+len(added))
	for _, it := range m.Items {
		if !removed[it] {
			out = append(out, it)
		}
	}
	return append(out, added...), notes
}

// ownMeta is the metadata of an object sparkui adds for a.
func ownMeta(a *app.App, name string) *yaml.Node {
	md := yamlx.NewMap("name", name)
	if a.Namespace != "" {
		yamlx.Set(md, "namespace", yamlx.NewStr(a.Namespace))
	}
	yamlx.Set(md, "labels", ownLabels(a))
	return md
}

func ownLabels(a *app.App) *yaml.Node {
	return yamlx.NewMap(names.LabelManagedBy, names.ManagedByValue, a.IdentityKey, a.IdentityValue)
}

// ensureOwnMeta makes an existing object's name, namespace and labels sparkui's again.
func ensureOwnMeta(rn *yaml.RNode, a *app.App, name string) {
	md := yamlx.Ensure(rn.YNode(), "metadata")
	yamlx.SetIfChanged(md, "name", yamlx.NewStr(name))
	labels := yamlx.Ensure(md, "labels")
	yamlx.SetIfChanged(labels, names.LabelManagedBy, yamlx.NewStr(names.ManagedByValue))
	yamlx.SetIfChanged(labels, a.IdentityKey, yamlx.NewStr(a.IdentityValue))
}

func object(apiVersion, kind string, md *yaml.Node, rest ...any) *yaml.RNode {
	n := yamlx.NewMap(append([]any{"apiVersion", apiVersion, "kind", kind, "metadata", md}, rest...)...)
	return yaml.NewRNode(n)
}

func nsSlash(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
