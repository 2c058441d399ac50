// Package validate holds sparkui's rules (SUI001…): each looks at the application model and
// reports what would fail in a running cluster, as KRM function results. A rule lives in the
// file named after its ID.
package validate

import (
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Context is what rules see.
type Context struct {
	Model *app.Model
	// RBACManagedElsewhere is set when the user told the function not to create RBAC: a
	// missing grant is then a warning, since the grant may live outside the input.
	RBACManagedElsewhere bool
}

// Finding is one rule hit.
type Finding struct {
	Object *yaml.RNode
	Field  string // dotted field path, "" when the whole object is at fault
	Msg    string
	// Severity overrides the rule's, for the few rules whose weight depends on context.
	Severity framework.Severity
}

// Rule is one entry of the catalog.
type Rule struct {
	ID       string
	Severity framework.Severity
	Title    string
	// Check is nil for rules raised outside the model (the functionConfig's SUI014).
	Check func(*Context) []Finding
}

// Rules is the catalog, in ID order.
var Rules = []Rule{
	{"SUI001", framework.Error, "a driver container declares containerPort: 0", checkSUI001},
	{"SUI002", framework.Error, "a Service selecting a driver declares port: 0 or targetPort: 0", checkSUI002},
	{"SUI003", framework.Error, "a UI Service exists while spark.ui.enabled=false", checkSUI003},
	{"SUI004", framework.Error, "the UI Service has a selector in the manifests", checkSUI004},
	{"SUI005", framework.Error, "the UI Service's IP families differ from the driver Service's", checkSUI005},
	{"SUI006", framework.Error, "a UI Service name is invalid or collides with another Service", checkSUI006},
	{"SUI007", framework.Error, "the driver's ServiceAccount lacks get or patch on the UI Service", checkSUI007},
	{"SUI008", framework.Error, "a UI Service exists but its driver Pod has no runtime to bind it", checkSUI008},
	{"SUI009", framework.Error, "the runtime's settings disagree with the application", checkSUI009},
	{"SUI010", framework.Error, "TLS is on but the UI Service is set up for plain HTTP", checkSUI010},
	{"SUI011", framework.Warning, "hostNetwork: true with declared containerPorts", checkSUI011},
	{"SUI012", framework.Warning, "an externally exposed UI Service outlives its driver", checkSUI012},
	{"SUI013", framework.Info, "driver-only or client mode detected", checkSUI013},
	{"SUI014", framework.Error, "invalid functionConfig", nil},
	{"SUI015", framework.Error, "unreadable spark.properties or a bad UI setting", checkSUI015},
	{"SUI016", framework.Warning, "the driver Pod has no serviceAccountName", checkSUI016},
	{"SUI017", framework.Warning, "the driver container has its own preStop hook", checkSUI017},
	{"SUI018", framework.Warning, "the driver's spark.properties ConfigMap is not in the input", checkSUI018},
	{"SUI019", framework.Error, "an object appears twice in the input", checkSUI019},
	{"SUI020", framework.Error, "a mapping key is defined twice in an object", nil},
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
func DataKeyPath(key string) string { return fieldpath.Key("data", key) }

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
