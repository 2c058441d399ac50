// Package validate holds sparkui's rules (SUI001…): each looks at the application model and
// reports what would fail in a running cluster, as KRM function results. A rule lives in the
// file named after its ID.
package validate

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Context is what rules see.
type Context struct {
	Model *app.Model
	// RBACManagedElsewhere is set when the user told the function not to create RBAC: a
	// missing grant is then a warning, since the grant may live outside the input.
	RBACManagedElsewhere bool
	// History is the functionConfig's History Server hand-off when the function runs the
	// rules (either mode); nil when the configuration is not known. SUI009 then checks the
	// runtimes' hand-off env against it; without it, only that the env is usable and that the
	// sidecars of one namespace agree on the redirector's port.
	History *sidecar.History
	// Expect is what the functionConfig has sparkui add to each application, when the rules
	// check input sparkui-fn should already have transformed (validate mode); nil when that
	// is not known (transform mode validates its own output), and then SUI060 is silent.
	Expect *Expect
}

// Expect is what transform mode would have added, as the functionConfig says.
type Expect struct {
	// UIService: service.enabled (default true); a UI Service, the runtime and (unless
	// rbac.create is false) RBAC are added to every application whose UI is on.
	UIService bool
}

// Finding is one rule hit.
type Finding struct {
	Object *yaml.RNode
	Field  string // dotted field path, "" when the whole object is at fault
	Msg    string
	// Severity overrides the rule's, for the few rules whose weight depends on context.
	Severity framework.Severity
}

// Rule is one rule: what it reports, its documentation (docs/rules.md is generated from it,
// the SARIF report carries it), and its check. Each lives in the file named after its ID and
// is listed once in Rules.
type Rule struct {
	ID       string
	Severity framework.Severity
	// Title is the one-line finding of the rules table and the SARIF short description.
	Title string
	// Name is a PascalCase identifier (SARIF reportingDescriptor.name).
	Name string
	// Catches, Why and Fix explain the rule to whoever meets its findings: what it catches,
	// the failure in a running cluster it prevents, and how to fix it.
	Catches, Why, Fix string
	// Failing and Passing are the smallest manifest excerpts that show the point (YAML);
	// PassingNote says in words what passes where an excerpt would not, Notes adds paragraphs.
	Failing, Passing, PassingNote, Notes string
	// RaisedBy and Fixtures are for rules raised outside the model (SUI014): the file that
	// raises it (relative to the repository root; the docs link it, so a move fails
	// validate/internal/gendocs), and where its fixtures are, in markdown relative to docs/.
	RaisedBy, Fixtures string
	// Check is nil for rules raised outside the model.
	Check func(*Context) []Finding
}

// HelpURI is where rule id's section of docs/rules.md is published.
func HelpURI(id string) string {
	return "https://github.com/sparkui/sparkui/blob/main/docs/rules.md#" + strings.ToLower(id)
}

// Run applies every rule and returns the results, application by application in input
// order, rules in ID order within each object.
func Run(ctx *Context) framework.Results {
	var out framework.Results
	for _, r := range Rules {
		if r.Check == nil {
			continue
		}
		for _, f := range r.Check(ctx) {
			sev := r.Severity
			if f.Severity != "" {
				sev = f.Severity
			}
			out = append(out, NewResult(r.ID, sev, f.Object, f.Field, f.Msg))
		}
	}
	return out
}

// NewResult builds a result the way every sparkui result looks: message prefixed by the rule
// ID, the rule in tags, the object and field, and the file when the input named one.
func NewResult(rule string, sev framework.Severity, obj *yaml.RNode, field, msg string) *framework.Result {
	r := &framework.Result{
		Message:  "[" + rule + "] " + msg,
		Severity: sev,
		Tags:     map[string]string{"rule": rule},
	}
	if obj != nil {
		ns, name := app.Meta(obj)
		r.ResourceRef = &yaml.ResourceIdentifier{
			TypeMeta: yaml.TypeMeta{
				APIVersion: yamlx.GetStr(obj.YNode(), "apiVersion"),
				Kind:       yamlx.GetStr(obj.YNode(), "kind"),
			},
			NameMeta: yaml.NameMeta{Name: name, Namespace: ns},
		}
		if p, i, ok := app.Source(obj); ok {
			r.File = &framework.File{Path: p, Index: i}
		}
	}
	if field != "" {
		r.Field = &framework.Field{Path: field}
	}
	return r
}

// Lookup returns the catalog entry for id.
func Lookup(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// DataKeyPath is the field path of a ConfigMap data key; keys hold dots, so they are quoted.
func DataKeyPath(key string) string {
	return fieldpath.Key("data", key)
}

// objName is "Kind ns/name" for messages.
func objName(rn *yaml.RNode) string {
	ns, name := app.Meta(rn)
	if ns != "" {
		name = ns + "/" + name
	}
	return yamlx.GetStr(rn.YNode(), "kind") + " " + name
}

func metaName(rn *yaml.RNode) (string, string) { return app.Meta(rn) }

func quote(s string) string { return `"` + s + `"` }

func itoa(i int) string { return strconv.Itoa(i) }
