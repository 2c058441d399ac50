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

// SUI070: applying the new rendering is refused by the API server.
var SUI070 = Rule{
	ID: "SUI070", Severity: framework.Error, Name: "BaselineApplyRefused",
	Title:   "applying the change over the previous rendering is refused by the API server (a Job's pod template, a Pod's fields other than images)",
	Catches: "A Job whose pod template differs between the previous rendering and the new one, or a driver Pod whose spec differs in more than container images and the few fields a Pod update may change.",
	Why:     "A Job's pod template is immutable (Kubernetes' ValidateJobSpecUpdate) and so is a Pod's spec but for images, activeDeadlineSeconds and added tolerations (ValidatePodUpdate): the apply fails and a GitOps sync stays failed or OutOfSync. With Flux's `force: true` or Argo CD's `Replace=true` the object is deleted and created again instead: the driver is killed (a completed Job runs again).",
	Fix:     "Apply it between runs: delete the Job or Pod once its run is over and let the next apply create it; or keep the old rendering for this object until then (docs/upgrading.md).",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}

// SUI071: applying the new rendering kills or restarts a running application.
var SUI071 = Rule{
	ID: "SUI071", Severity: framework.Warning, Name: "BaselineRestartsApplication",
	Title:   "applying the change kills or restarts a running application (kubeflow resubmission, a rollout, a Pod's container restart)",
	Catches: "A carrier whose spec differs between the renderings where its controller restarts the driver: a kubeflow SparkApplication (any change but suspend and timeToLiveSeconds), a Deployment's or StatefulSet's pod template, a driver Pod's images.",
	Why:     "The kubeflow operator invalidates the application, deletes its driver and submits it again, also when it had already completed or failed; a rollout replaces the driver Pod (Spark Connect and notebook sessions are lost); the kubelet restarts a Pod's container whose image changed. A streaming job or a long batch starts over.",
	Fix:     "Roll it when a restart costs least: between runs, after suspending a kubeflow application (spec.suspend), or in a maintenance window; docs/upgrading.md says how per carrier.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}

// SUI072: the change is never applied to the running application.
var SUI072 = Rule{
	ID: "SUI072", Severity: framework.Warning, Name: "BaselineNeverApplied",
	Title:   "the change is accepted but never reaches the application until it is recreated (Stackable SparkApplication, kubeflow SparkConnect)",
	Catches: "A Stackable SparkApplication or a kubeflow SparkConnect whose spec differs between the renderings.",
	Why:     "The Stackable operator never reconciles an application again once it created its Job, and the kubeflow operator builds a SparkConnect server Pod only when it creates it: the object in the cluster says one thing and the driver runs another, and nothing reports it.",
	Fix:     "Delete and create the object again when a restart is acceptable (docs/upgrading.md), or keep the old rendering for it.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}

// SUI073: the change takes effect at the next run or attempt.
var SUI073 = Rule{
	ID: "SUI073", Severity: framework.Info, Name: "BaselineNextRun",
	Title:   "the change takes effect at the next run or attempt (ScheduledSparkApplication, CronJob, Apache SparkApplication)",
	Catches: "A kubeflow ScheduledSparkApplication, a CronJob or an Apache SparkApplication whose spec differs between the renderings.",
	Why:     "Their controllers build each run (or attempt) from the object when it starts: the running driver is left alone and the next one has the change.",
	Fix:     "Nothing to do; it is reported so that a review sees which applications change.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}

// SUI074: the change is taken in place without a restart.
var SUI074 = Rule{
	ID: "SUI074", Severity: framework.Info, Name: "BaselineAppliedInPlace",
	Title:   "the change is taken in place and restarts nothing (kubeflow suspend/TTL, a workload's fields outside its pod template)",
	Catches: "A carrier whose spec differs only in fields its controller takes without touching the driver: a kubeflow SparkApplication's suspend or timeToLiveSeconds, a workload's replicas or strategy, a Pod's activeDeadlineSeconds or added tolerations.",
	Why:     "Nothing breaks; it is reported so that a review sees every carrier that changes.",
	Fix:     "Nothing to do.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}

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
