package policy

import (
	"os"
	"regexp"
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

// TestAdmissionDocCoverage: docs/admission.md's table of the policies per carrier names only
// policies that exist, and every policy of the rules it has a column for.
func TestAdmissionDocCoverage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/admission.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	var ids []string
	cells := map[string]int{} // policy name → times named
	rows := 0
	for i, line := range lines {
		if !strings.HasPrefix(line, "| carrier |") {
			continue
		}
		for _, c := range strings.Split(strings.Trim(line, "|"), "|")[1:] {
			ids = append(ids, strings.TrimSpace(c))
		}
		for _, row := range lines[i+2:] { // after the header's separator
			cols := strings.Split(strings.Trim(row, "|"), "|")
			if !strings.HasPrefix(row, "| ") || len(cols) != len(ids)+1 {
				break
			}
			rows++
			for j, c := range cols[1:] {
				for _, m := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(c, -1) {
					cells["sparkui-"+strings.ToLower(ids[j])+"-"+m[1]]++
				}
			}
		}
		break
	}
	if rows < 10 {
		t.Fatalf("docs/admission.md: %d rows in the per-carrier table", rows)
	}
	want := map[string]bool{}
	for _, r := range Enforced() {
		for _, p := range r.Admission {
			want[Name(r.ID, p)] = true
		}
	}
	for name := range cells {
		if !want[name] {
			t.Errorf("docs/admission.md names %s, no such policy", name)
		}
	}
	for _, r := range Enforced() {
		documented := false
		for name := range cells {
			documented = documented || strings.HasPrefix(name, "sparkui-"+strings.ToLower(r.ID)+"-")
		}
		if !documented {
			continue // a rule of no carrier (the UI Services'): not in the table
		}
		for _, p := range r.Admission {
			if cells[Name(r.ID, p)] == 0 {
				t.Errorf("docs/admission.md: the per-carrier table lacks %s", Name(r.ID, p))
			}
		}
	}
}
