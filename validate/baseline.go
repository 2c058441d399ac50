package validate

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// The baseline rules (SUI070–SUI074) compare two renderings, OLD (what the cluster has, e.g.
// the main branch's) and NEW (the change), and say what applying NEW does to every carrier
// whose spec differs, from what its controller does with a change (each adapter's OnUpdate,
// internal/app/update.go). They judge two objects at once: no admission policy and no
// single-input fixture; `sparkui-fn validate --baseline OLD NEW` raises them.

const baselineRaisedBy = "validate/baseline.go"

const baselineFixtures = "`TestBaseline*` in [`validate/baseline_test.go`](../validate/baseline_test.go): every carrier golden's output against itself with a new runtime image (the rule per carrier), one exact message, and what is not reported."

const baselineFailing = `# old: the main branch's rendering
initContainers:
- name: sparkui-runtime
  image: ghcr.io/sparkui/sparkui-runtime:1
# new: the change
initContainers:
- name: sparkui-runtime
  image: ghcr.io/sparkui/sparkui-runtime:2   # SUI07x on the carrier, by what its controller does
`

const baselinePassing = `# old and new renderings equal for the carrier, or only a Service, Role or route changed
`

// baselineRules are the rule of each effect.
var baselineRules = map[app.UpdateEffect]Rule{
	app.UpdateRefused: SUI070, app.UpdateRestarts: SUI071, app.UpdateNeverApplied: SUI072,
	app.UpdateNextRun: SUI073, app.UpdateInPlace: SUI074,
}

// CompareRenderings reports, for every carrier of new that old has too (same apiVersion,
// kind, namespace and name) and whose spec differs, what applying new does to it. A carrier
// in only one rendering is an application added or removed on purpose: not reported. Other
// objects (Services, RBAC, routes, ConfigMaps) are not compared: applying them restarts no
// driver. A carrier that cannot be read in either rendering is an error, naming it.
func CompareRenderings(old, new []*yaml.RNode) (framework.Results, error) {
	before := map[string]*app.Carrier{}
	for _, rn := range old {
		c, err := app.DetectCarrier(rn, app.CarrierOptions{})
		if err != nil {
			return nil, fmt.Errorf("baseline: %v", err)
		}
		if c != nil {
			before[carrierKey(c)] = c
		}
	}
	var out framework.Results
	for _, rn := range new {
		c, err := app.DetectCarrier(rn, app.CarrierOptions{})
		if err != nil {
			return nil, err
		}
		if c == nil || before[carrierKey(c)] == nil {
			continue
		}
		changes := diffSpec(yamlx.Get(before[carrierKey(c)].Object.YNode(), "spec"), yamlx.Get(rn.YNode(), "spec"))
		if len(changes) == 0 {
			continue
		}
		paths := make([]string, len(changes))
		for i, ch := range changes {
			paths[i] = ch.Path
		}
		u := c.OnUpdate(paths)
		rule := baselineRules[u.Effect]
		out = append(out, NewResult(rule.ID, rule.Severity, rn, changes[0].Path, objName(rn)+" changed ("+describeChanges(changes)+"): "+u.Says))
	}
	return out, nil
}

func carrierKey(c *app.Carrier) string {
	return c.APIVersion + "|" + c.ObjectKind + "|" + c.Namespace + "|" + c.Name
}

// describeChanges names whose fields changed, sparkui's first, each list capped so that a
// message stays one readable line.
func describeChanges(changes []change) string {
	var ours, theirs []string
	for _, ch := range changes {
		if ch.Sparkui {
			ours = append(ours, ch.Path)
		} else {
			theirs = append(theirs, ch.Path)
		}
	}
	var parts []string
	if len(ours) > 0 {
		parts = append(parts, "sparkui's fields "+capList(ours))
	}
	if len(theirs) > 0 {
		parts = append(parts, "your fields "+capList(theirs))
	}
	return strings.Join(parts, "; ")
}

func capList(paths []string) string {
	const most = 6
	if len(paths) > most {
		return strings.Join(paths[:most], ", ") + fmt.Sprintf(" and %d more", len(paths)-most)
	}
	return strings.Join(paths, ", ")
}
