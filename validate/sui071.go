package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI071: applying the new rendering kills or restarts a running application.
var SUI071 = Rule{
	ID: "SUI071", Severity: framework.Warning, Name: "BaselineRestartsApplication",
	Title:   "applying the change kills or restarts a running application (kubeflow resubmission, a rollout, a Pod's container restart)",
	Catches: "A carrier whose spec differs between the renderings where its controller restarts the driver: a kubeflow SparkApplication (any change but suspend and timeToLiveSeconds), a Deployment's or StatefulSet's pod template, a driver Pod's images.",
	Why:     "The kubeflow operator invalidates the application, deletes its driver and submits it again, also when it had already completed or failed; a rollout replaces the driver Pod (Spark Connect and notebook sessions are lost); the kubelet restarts a Pod's container whose image changed. A streaming job or a long batch starts over.",
	Fix:     "Roll it when a restart costs least: between runs, after suspending a kubeflow application (spec.suspend), or in a maintenance window; docs/upgrading.md says how per carrier.",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}
