package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI072: the change is never applied to the running application.
var SUI072 = Rule{
	ID: "SUI072", Severity: framework.Warning, Name: "BaselineNeverApplied",
	Title:   "the change is accepted but never reaches the application until it is recreated (Stackable SparkApplication, kubeflow SparkConnect)",
	Catches: "A Stackable SparkApplication or a kubeflow SparkConnect whose spec differs between the renderings.",
	Why:     "The Stackable operator never reconciles an application again once it created its Job, and the kubeflow operator builds a SparkConnect server Pod only when it creates it: the object in the cluster says one thing and the driver runs another, and nothing reports it.",
	Fix:     "Delete and create the object again when a restart is acceptable (docs/upgrading.md), or keep the old rendering for it.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}
