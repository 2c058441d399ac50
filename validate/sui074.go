package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI074: the change is taken in place without a restart.
var SUI074 = Rule{
	ID: "SUI074", Severity: framework.Info, Name: "BaselineAppliedInPlace",
	Title:   "the change is taken in place and restarts nothing (kubeflow suspend/TTL, a workload's fields outside its pod template)",
	Catches: "A carrier whose spec differs only in fields its controller takes without touching the driver: a kubeflow SparkApplication's suspend or timeToLiveSeconds, a workload's replicas or strategy, a Pod's activeDeadlineSeconds or added tolerations.",
	Why:     "Nothing breaks; it is reported so that a review sees every carrier that changes.",
	Fix:     "Nothing to do.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}
