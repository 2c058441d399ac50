package app

import (
	"regexp"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// KindPod is a spark-submit driver Pod.
const KindPod CarrierKind = "Pod"

// podAdapter: a v1 Pod labelled spark-role=driver, as spark-submit creates it.
var podAdapter = &Adapter{kind: KindPod, versions: []string{"v1"}, objectKind: "Pod", resource: "pods",
	podSpec: []string{"spec"}, caps: CapSubmitOutput,
	admission: &Admission{Name: "pod", Labels: map[string]string{names.LabelSparkRole: names.RoleDriver}, PodSpec: "object.spec"},
	onUpdate:  podUpdate,
	detect:    func(c *Carrier, _ CarrierOptions) (bool, error) { return c.detectPod() }}

// detectPod recognises a spark-submit driver Pod: a v1 Pod labelled spark-role=driver. Its
// conf lives in the ConfigMap mounted as the driver's conf volume and its prefix follows the
// driver Service, both of which only the indexed input knows: buildPod (build.go) finds
// those, the carrier gives the rest.
func (c *Carrier) detectPod() (bool, error) {
	// Lenient on purpose: a Pod whose labels cannot be read is no driver, not an error.
	if yamlx.GetStr(c.Object.YNode(), "metadata", "labels", names.LabelSparkRole) != names.RoleDriver {
		return false, nil
	}
	// spark-submit creates the Pod in cluster mode; Build refines this from the conf
	// (spark.submit.deployMode, spark.kubernetes.driver.master).
	c.DeployMode = "cluster"
	c.DriverPodName = c.Name
	var err error
	if c.ServiceAccount, c.ServiceAccountPath, c.HostNetwork, err = c.readPodSpecFacts(); err != nil {
		return false, err
	}
	return true, nil
}

// podImage is a container's or init container's image in a Pod: the only pod-spec field
// whose change restarts something.
var podImage = regexp.MustCompile(`^spec\.(containers|initContainers)\[[0-9]+\]\.image$`)

// podUpdate: the API server's Pod update validation (k8s.io/kubernetes
// pkg/apis/core/validation/validation.go ValidatePodUpdate, read at v1.37.2) refuses every
// pod-spec change but containers' and init containers' images, activeDeadlineSeconds,
// additions to tolerations, removed schedulingGates and a terminationGracePeriodSeconds
// going from negative to 1 (updatablePodSpecFields). An image change is taken: the kubelet
// restarts that container (for the runtime: withdraw, then bind again, a gap in the UI).
func podUpdate(_ *Carrier, changed []string) Update {
	images := true
	for _, p := range changed {
		if !podImage.MatchString(p) {
			images = false
		}
	}
	switch {
	case images:
		return Update{Effect: UpdateRestarts, Says: "the API server takes a Pod's image change and the kubelet restarts that container in the running driver Pod (the runtime's restart withdraws the UI Service, then binds it again)"}
	case onlyUnder(changed, "spec.activeDeadlineSeconds", "spec.tolerations", "spec.schedulingGates", "spec.terminationGracePeriodSeconds"):
		return Update{Effect: UpdateInPlace, Says: "the API server takes this change of a running Pod in place (ValidatePodUpdate: activeDeadlineSeconds, added tolerations, removed scheduling gates)"}
	}
	return Update{Effect: UpdateRefused, Says: "the API server refuses it: a Pod's spec is immutable but for images, activeDeadlineSeconds and added tolerations (ValidatePodUpdate); with Flux's force or Argo CD's Replace=true the Pod is deleted and created again instead, which kills the running driver"}
}
