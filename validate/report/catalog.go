package report

import "github.com/sparkui/sparkui/validate"

// Catalog is validate's rule catalog as the formats describe it. It is the only place this
// package reads validate's rule metadata.
func Catalog() []Rule {
	var out []Rule
	for _, r := range validate.Rules {
		d := validate.Docs[r.ID]
		out = append(out, Rule{
			ID: r.ID, Name: d.Name, Severity: r.Severity, Title: r.Title,
			Catches: d.Catches, Why: d.Why, Fix: d.Fix, HelpURI: validate.HelpURI(r.ID),
			Checked: r.Check != nil,
		})
	}
	return out
}
