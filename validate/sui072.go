package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI072: the change is never applied to the running application.
var SUI072 = Rule{
	ID: "SUI072", Severity: framework.Warning, Name: "BaselineNeverApplied",
	Title:   "the change is accepted but never reaches the application until it is recreated (Stackable SparkApplication, kubeflow SparkConnect)",
	Catches: "A Stackable SparkApplication or a kubeflow SparkConnect whose spec differs between the renderings.",
	Why:     "The Stackable operator never reconciles an application again once it created its Job, and the kubeflow operator builds a SparkConnect server Pod only when the Pod does not exist (it reconciles the change and leaves the running server as it is): the object in the cluster says one thing and the driver runs another, and nothing reports it.",
	Fix:     "When a restart is acceptable: for a kubeflow SparkConnect delete its server Pod `<name>-server` (the operator builds it again from the current spec); for a Stackable SparkApplication delete and create the object again (docs/upgrading.md). Or keep the old rendering for it.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}
