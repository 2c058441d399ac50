package transform

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// AppPlan is everything transform does for one application, computed from the model alone:
// nothing is written until Apply executes the plans of every application, so what sparkui
// would write, replace or take out is asserted on the plan, without rendering YAML.
type AppPlan struct {
	App *app.App
	// Edits are changes to input objects other than sparkui's own: the zero ports of the
	// driver container and of the Services selecting it.
	Edits []Edit
	// Err is a carrier field of the wrong shape on the way to a slot (SUI030): of the rest,
	// only Prepare's slots that could be made are made, nothing is added.
	Err error
	// Prepare makes the carrier's slots; Pin names the driver container in the conf
	// (PinConf); Carrier is the injection of the runtime, or its removal when the UI is off.
	Prepare Plan
	Pin     []ConfOp
	Carrier Plan
	// Add are new objects (UI Service, Role, RoleBinding, routes), in output order; Update
	// are sparkui's existing ones, each brought back to its Want in place; Remove are
	// objects that leave the output.
	Add    []*yaml.RNode
	Update []Update
	Remove []*yaml.RNode
	// Conf is the route's proxy settings in the application's conf.
	Conf  []ConfOp
	Notes []Note
}

// Edit is a plan of path operations on one object.
type Edit struct {
	Object *yaml.RNode
	Plan   Plan
}

// Update is one of sparkui's existing objects and what it should be: the object sparkui
// would add in its place. Its reconcile keeps what sparkui does not own on it.
type Update struct {
	Object, Want *yaml.RNode
}

// PlanApps computes the plan of every application of m, in model order.
func PlanApps(m *app.Model, o Options) []*AppPlan {
	seen := map[*yaml.RNode]bool{}
	plans := make([]*AppPlan, len(m.Apps))
	for i, a := range m.Apps {
		plans[i] = planApp(m, a, o, seen)
	}
	return plans
}

func planApp(m *app.Model, a *app.App, o Options, seen map[*yaml.RNode]bool) *AppPlan {
	p := &AppPlan{App: a, Edits: zeroPortEdits(a, seen)}
	if !o.ServiceEnabled {
		return p
	}
	if !a.Settings.UIEnabled {
		for _, rn := range []*yaml.RNode{a.UIService, a.Role, a.RoleBinding} {
			if rn != nil {
				p.Remove = append(p.Remove, rn)
				_, name := app.Meta(rn)
				p.Notes = append(p.Notes, Note{App: a, Object: rn, Rule: "SUI003",
					Msg: "removed " + yamlx.GetStr(rn.YNode(), "kind") + " " + name + ": spark.ui.enabled=false, so there is no UI to serve"})
			}
		}
		p.Carrier = RemovalPlan(a)
		return p
	}
	// Fail before adding anything: a carrier whose slots cannot be written gets no Service or
	// RBAC that nothing would bind.
	if p.Prepare, p.Pin, p.Err = preparePlan(a.Carrier); p.Err != nil {
		return p
	}
	rp := planRoute(m, a, a.UIService, o)
	p.Add = make([]*yaml.RNode, 0, 3+len(rp.add))
	p.own(a.UIService, wantUIService(a, o, &rp))
	if o.CreateRBAC {
		p.own(a.Role, NewRole(a, o))
		p.own(a.RoleBinding, NewRoleBinding(a))
	}
	p.Carrier = InjectionPlan(a, o)
	p.Add = append(p.Add, rp.add...)
	p.Update = append(p.Update, rp.update...)
	// A route of another kind sparkui wrote before goes silently, as a rerun must give the
	// same results (docs/routes.md); a second one of a kind is said (SUI055).
	p.Remove = append(p.Remove, rp.remove...)
	p.Conf = rp.conf
	p.Notes = append(p.Notes, rp.notes...)
	return p
}

// own plans want: added when sparkui has no such object yet (cur nil), else cur brought back
// to it.
func (p *AppPlan) own(cur, want *yaml.RNode) {
	if cur == nil {
		p.Add = append(p.Add, want)
		return
	}
	p.Update = append(p.Update, Update{Object: cur, Want: want})
}

// apply executes the plan: the input's objects are edited in place; what is added and
// removed is returned for Apply to put in the output.
func (p *AppPlan) apply() (notes []Note) {
	a := p.App
	if a == nil {
		// Objects alone (UninstallPlans' orphans): nothing to edit.
		return p.Notes
	}
	for _, e := range p.Edits {
		e.Plan.applyTo(e.Object.YNode())
	}
	if _, err := p.Prepare.Apply(a.Carrier); err != nil && p.Err == nil {
		p.Err = err
	}
	if p.Err != nil {
		n := Note{App: a, Object: a.Object, Rule: "SUI030", Error: true, Msg: p.Err.Error()}
		var se *app.ShapeError
		if errors.As(p.Err, &se) {
			n.Field = se.Field
			n.Msg = se.Kind + " " + nsSlash(se.Namespace, se.Name) + ": " + se.Field + " " + se.Msg + "; sparkui adds nothing for it"
		}
		return []Note{n}
	}
	if len(p.Pin) > 0 {
		applyConf(a.Object.YNode(), a.Carrier.ConfPath, p.Pin)
	}
	for _, u := range p.Update {
		switch yamlx.GetStr(u.Want.YNode(), "kind") {
		case "Service":
			reconcileUIService(a, u.Object, u.Want)
		case "Role", "RoleBinding":
			reconcileRBAC(a, u.Object, u.Want)
		default:
			reconcileRoute(a, u.Object, u.Want)
		}
	}
	_, _ = p.Carrier.Apply(a.Carrier)
	if len(p.Conf) > 0 {
		if a.Carrier.ConfPath != "" {
			applyConf(a.Object.YNode(), a.Carrier.ConfPath, p.Conf)
		} else {
			applyProperties(a.ConfigMap.YNode(), p.Conf)
		}
	}
	return p.Notes
}

// Strings is the plan one line an operation, what tests compare: objects named
// kind/namespace/name, carrier operations as Op.String writes them.
func (p *AppPlan) Strings() []string {
	var out []string
	ref := func(rn *yaml.RNode) string {
		ns, name := app.Meta(rn)
		return yamlx.GetStr(rn.YNode(), "kind") + " " + nsSlash(ns, name)
	}
	for _, e := range p.Edits {
		for _, o := range e.Plan {
			out = append(out, "edit "+ref(e.Object)+": "+o.String())
		}
	}
	if p.Err != nil {
		out = append(out, "error: "+p.Err.Error())
	}
	for _, o := range p.Prepare {
		out = append(out, "prepare: "+o.String())
	}
	for _, o := range p.Pin {
		out = append(out, "pin: "+o.String())
	}
	for _, rn := range p.Add {
		out = append(out, "add "+ref(rn))
	}
	for _, u := range p.Update {
		out = append(out, "update "+ref(u.Object))
	}
	for _, rn := range p.Remove {
		out = append(out, "remove "+ref(rn))
	}
	for _, o := range p.Carrier {
		out = append(out, "carrier: "+o.String())
	}
	for _, o := range p.Conf {
		out = append(out, o.String())
	}
	return out
}
