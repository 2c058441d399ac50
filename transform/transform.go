// Package transform rewrites Spark driver manifests: it drops the zero ports the API server
// rejects and adds, for each application, the selectorless UI Service, the RBAC that lets the
// runtime bind it, and the runtime sidecar with its withdrawal hook. Every step edits nodes in
// place, only where they differ from what is wanted, so output is idempotent and keeps the
// input's order and comments.
package transform

import (
	"errors"

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
// items in order (minus any UI Service removed because the UI is disabled) followed by the
// objects added, application by application.
func Apply(m *app.Model, o Options) ([]*yaml.RNode, []Note) {
	var added []*yaml.RNode
	var notes []Note
	removed := map[*yaml.RNode]bool{}
	for _, a := range m.Apps {
		DropZeroPorts(a)
		if !o.ServiceEnabled {
			continue
		}
		if !a.Settings.UIEnabled {
			for _, rn := range []*yaml.RNode{a.UIService, a.Role, a.RoleBinding} {
				if rn != nil {
					removed[rn] = true
					_, name := app.Meta(rn)
					notes = append(notes, Note{App: a, Object: rn, Rule: "SUI003",
						Msg: "removed " + yamlx.GetStr(rn.YNode(), "kind") + " " + name + ": spark.ui.enabled=false, so there is no UI to serve"})
				}
			}
			RemoveRuntime(a)
			continue
		}
		// Fail before adding anything: a carrier whose slots cannot be written gets no
		// Service or RBAC that nothing would bind.
		if err := PrepareCarrier(a); err != nil {
			n := Note{App: a, Object: a.Object, Rule: "SUI030", Error: true, Msg: err.Error()}
			var se *app.ShapeError
			if errors.As(err, &se) {
				n.Field = se.Field
				n.Msg = se.Kind + " " + nsSlash(se.Namespace, se.Name) + ": " + se.Field + " " + se.Msg + "; sparkui adds nothing for it"
			}
			notes = append(notes, n)
			continue
		}
		// What sparkui adds is found in the model (a.UIService, a.Role, a.RoleBinding) or made
		// here; the App itself is the input's facts and is never written.
		svc := a.UIService
		if svc == nil {
			svc = NewUIService(a, o)
			added = append(added, svc)
		} else {
			EnsureUIService(a, svc, o)
		}
		if o.CreateRBAC {
			if a.Role == nil {
				added = append(added, NewRole(a))
			} else {
				EnsureRole(a, a.Role)
			}
			if a.RoleBinding == nil {
				added = append(added, NewRoleBinding(a))
			} else {
				EnsureRoleBinding(a, a.RoleBinding)
			}
		}
		InjectRuntime(a, o)
		radded, rremoved, rnotes := ApplyRoute(m, a, svc, o)
		added = append(added, radded...)
		// A route of another kind sparkui wrote before goes silently, as a rerun must give
		// the same results (docs/routes.md); a second one of a kind is said (SUI055).
		for _, rn := range rremoved {
			removed[rn] = true
		}
		notes = append(notes, rnotes...)
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
