package transform

import (
	"testing"

	"github.com/sparkui/sparkui/internal/app"
)

// prepare executes the carrier's preparation (its slots made, an Apache driver container
// pinned), as AppPlan.apply does before anything else.
func prepare(t *testing.T, a *app.App) {
	t.Helper()
	p, pin, err := preparePlan(a.Carrier)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(a.Carrier); err != nil {
		t.Fatal(err)
	}
	if len(pin) > 0 {
		applyConf(a.Object.YNode(), a.Carrier.ConfPath, pin)
	}
}

// inject prepares a's carrier and executes its InjectionPlan.
func inject(t *testing.T, a *app.App, o Options) {
	t.Helper()
	prepare(t, a)
	if _, err := InjectionPlan(a, o).Apply(a.Carrier); err != nil {
		t.Fatal(err)
	}
}

// remove executes a's RemovalPlan.
func remove(t *testing.T, a *app.App) {
	t.Helper()
	if _, err := RemovalPlan(a).Apply(a.Carrier); err != nil {
		t.Fatal(err)
	}
}
