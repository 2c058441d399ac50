package app

import (
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// KindPod is a spark-submit driver Pod.
const KindPod CarrierKind = "Pod"

// podAdapter: a v1 Pod labelled spark-role=driver, as spark-submit creates it.
var podAdapter = &Adapter{kind: KindPod, versions: []string{"v1"}, objectKind: "Pod", resource: "pods",
	podSpec: []string{"spec"}, caps: CapSubmitOutput,
	admission: &Admission{Name: "pod", Labels: map[string]string{names.LabelSparkRole: names.RoleDriver}, PodSpec: "object.spec"},
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
