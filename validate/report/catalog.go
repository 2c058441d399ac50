package report

import "github.com/sparkui/sparkui/validate"

// Catalog is validate's rule catalog as the formats describe it. It is the only place this
// package reads validate's rule metadata.
func Catalog() []Rule {
	var out []Rule
	for _, r := range validate.Rules {
		out = append(out, Rule{
			ID: r.ID, Name: r.Name, Severity: r.Severity, Title: r.Title,
			Catches: r.Catches, Why: r.Why, Fix: r.Fix, HelpURI: validate.HelpURI(r.ID),
			Checked: r.Check != nil,
		})
	}
	return out
}
