package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/validate"
)

// TestCatalogAdmission: the catalog's admission entries are usable: only error and warning
// rules have them, never with RefusedByAPIServer, each has a resource and a validation, and
// names are unique DNS subdomains (what the API server requires of a policy's name).
func TestCatalogAdmission(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range validate.Rules {
		if len(r.Admission) == 0 {
			continue
		}
		if r.Severity != framework.Error && r.Severity != framework.Warning {
			t.Errorf("%s: severity %s cannot be enforced", r.ID, r.Severity)
		}
		if r.RefusedByAPIServer != "" {
			t.Errorf("%s: both admission policies and RefusedByAPIServer", r.ID)
		}
		for _, p := range r.Admission {
			name := Name(r.ID, p)
			if seen[name] {
				t.Errorf("%s: two policies named %s", r.ID, name)
			}
			seen[name] = true
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("%s: %v", name, errs)
			}
			if len(p.Versions) == 0 || len(p.Resources) == 0 || len(p.Validations) == 0 {
				t.Errorf("%s: no version, resource or validation", name)
			}
		}
	}
}

// TestYAML: a policy and its binding per admission entry, each message starting with the
// rule id and free of line breaks.
func TestYAML(t *testing.T) {
	y, err := YAML()
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(string(y)), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range Enforced() {
		want += 2 * len(r.Admission)
	}
	if len(items) != want || want < 14 {
		t.Fatalf("%d objects, want %d", len(items), want)
	}
	for i := 0; i < len(items); i += 2 {
		p, b := items[i], items[i+1]
		rule := p.GetAnnotations()[AnnotationRule]
		if p.GetKind() != "ValidatingAdmissionPolicy" || b.GetKind() != "ValidatingAdmissionPolicyBinding" || b.GetName() != p.GetName() {
			t.Fatalf("objects %d, %d: %s %s, %s %s", i, i+1, p.GetKind(), p.GetName(), b.GetKind(), b.GetName())
		}
		r, ok := validate.Lookup(rule)
		if !ok {
			t.Fatalf("%s: rule %q", p.GetName(), rule)
		}
		vs, err := p.Pipe(yaml.Lookup("spec", "validations"))
		if err != nil || vs == nil {
			t.Fatalf("%s: no validations", p.GetName())
		}
		elems, _ := vs.Elements()
		for _, v := range elems {
			msg, _ := v.GetString("message")
			if !strings.HasPrefix(msg, "["+rule+"] "+r.Title+": ") || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("%s: message %q", p.GetName(), msg)
			}
		}
		action, _ := b.GetString("spec.validationActions[0]")
		if action != Action(r.Severity) {
			t.Errorf("%s: action %q for a %s rule", b.GetName(), action, r.Severity)
		}
	}
}
