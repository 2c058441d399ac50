package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI073: the change takes effect at the next run or attempt.
var SUI073 = Rule{
	ID: "SUI073", Severity: framework.Info, Name: "BaselineNextRun",
	Title:   "the change takes effect at the next run or attempt (ScheduledSparkApplication, CronJob, Apache SparkApplication)",
	Catches: "A kubeflow ScheduledSparkApplication, a CronJob or an Apache SparkApplication whose spec differs between the renderings.",
	Why:     "Their controllers build each run (or attempt) from the object when it starts: the running driver is left alone and the next one has the change.",
	Fix:     "Nothing to do; it is reported so that a review sees which applications change.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}
