package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI070: applying the new rendering is refused by the API server.
var SUI070 = Rule{
	ID: "SUI070", Severity: framework.Error, Name: "BaselineApplyRefused",
	Title:   "applying the change over the previous rendering is refused by the API server (a Job's pod template, a Pod's fields other than images)",
	Catches: "A Job whose pod template differs between the previous rendering and the new one, or a driver Pod whose spec differs in more than container images and the few fields a Pod update may change.",
	Why:     "A Job's pod template is immutable (Kubernetes' ValidateJobSpecUpdate) and so is a Pod's spec but for images, activeDeadlineSeconds and added tolerations (ValidatePodUpdate): the apply fails and a GitOps sync stays failed or OutOfSync. With Flux's `force: true` or Argo CD's `Replace=true` the object is deleted and created again instead: the driver is killed (a completed Job runs again).",
	Fix:     "Apply it between runs: delete the Job or Pod once its run is over and let the next apply create it; or keep the old rendering for this object until then (docs/upgrading.md).",
	Failing: baselineFailing, Passing: baselinePassing, RaisedBy: baselineRaisedBy, Fixtures: baselineFixtures,
}
