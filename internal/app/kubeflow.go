package app

import (
	"errors"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
)

// The kubeflow spark-operator (github.com/kubeflow/spark-operator). Sources are named as in
// docs/operators.md; they were read at commit 38082f33 (after v2.5.2).

const kubeflowAPIVersion = "sparkoperator.k8s.io/v1beta2"

// ErrNoPodSpec is asked-for pod spec on the kubeflow webhook injection: there the operator's
// webhook copies spec.driver fields into the Pod and nothing is a pod spec.
var ErrNoPodSpec = errors.New("app: the kubeflow webhook injection has no pod spec to write to")

// detectKubeflow reads a SparkApplication, or a ScheduledSparkApplication whose
// spec.template is the SparkApplicationSpec every run is created from
// (scheduledsparkapplication/controller.go createSparkApplication copies it verbatim).
func (c *Carrier) detectKubeflow(opts CarrierOptions) error {
	c.Injection = opts.KubeflowInjection
	if c.ObjectKind == "ScheduledSparkApplication" {
		p, err := c.readScalar("spec", "concurrencyPolicy")
		if err != nil {
			return err
		}
		// Kept as written: the CRD has no default and shouldStartNextRun treats an unset
		// policy as "no further run" once one run exists.
		c.ConcurrencyPolicy = p
	}
	var err error
	if c.Conf, err = c.readStringMap(cat(c.base, "sparkConf")...); err != nil {
		return err
	}
	c.ConfPath = joinPath(cat(c.base, "sparkConf")...)
	c.readIPFamilies()

	// spec.mode → --deploy-mode, defaulted to cluster (api/v1beta2/defaults.go).
	if c.DeployMode, err = c.readScalar(cat(c.base, "mode")...); err != nil {
		return err
	}
	if c.DeployMode == "" {
		c.DeployMode = "cluster"
	}
	if c.MainClass, err = c.readScalar(cat(c.base, "mainClass")...); err != nil {
		return err
	}
	if c.SparkVersion, err = c.readScalar(cat(c.base, "sparkVersion")...); err != nil {
		return err
	}
	if _, _, err = c.walk(false, cat(c.base, "driver")...); err != nil {
		return err
	}

	// The template is used whenever it is set (submission.go driverPodTemplateOption), on
	// either route, so its shape and facts always count.
	tmplSA, tmplSAPath, tmplHostNet, err := c.readPodSpecFacts()
	if err != nil {
		return err
	}
	lc, lcPath, err := c.walk(false, cat(c.base, "driver", "lifecycle")...)
	if err != nil {
		return err
	}
	if lc != nil {
		c.UserLifecyclePath = lcPath
	}
	if c.Injection == InjectWebhook {
		for _, l := range [][]string{cat(c.base, "driver", "initContainers"), cat(c.base, "driver", "volumeMounts"), cat(c.base, "volumes")} {
			if _, _, err := c.walkSeq(false, l...); err != nil {
				return err
			}
		}
	}
	if _, err := c.readStringMap(cat(c.base, "driver", "labels")...); err != nil {
		return err
	}
	// driver.hostNetwork is applied by the webhook (sparkpod_defaulter.go addHostNetwork);
	// the template's by Spark. Either puts the driver on the host network.
	hostNet, err := c.readBool(cat(c.base, "driver", "hostNetwork")...)
	if err != nil {
		return err
	}
	c.HostNetwork = hostNet || tmplHostNet

	// ServiceAccount: driver.serviceAccount becomes
	// spark.kubernetes.authenticate.driver.serviceAccountName (driverConfOption, emitted
	// after sparkConfOption, so it wins: last --conf wins); that conf, when set, overrides
	// the template's serviceAccountName (Spark DriverKubernetesCredentialsFeatureStep).
	saPath := joinPath(cat(c.base, "driver", "serviceAccount")...)
	if c.ServiceAccount, err = c.readScalar(cat(c.base, "driver", "serviceAccount")...); err != nil {
		return err
	}
	c.ServiceAccountPath = saPath
	if c.ServiceAccount == "" {
		c.ServiceAccount, c.ServiceAccountPath = c.Conf[KeyDriverSA], fieldpath.Key(c.ConfPath, KeyDriverSA)
	}
	if c.ServiceAccount == "" {
		c.ServiceAccount, c.ServiceAccountPath = tmplSA, tmplSAPath
	}

	// Driver Pod name: pkg/util/sparkapplication.go GetDriverPodName. A scheduled run is
	// named <ssa>-<timestamp>, so only an explicit name is known for it.
	if c.DriverPodName, err = c.readScalar(cat(c.base, "driver", "podName")...); err != nil {
		return err
	}
	if c.DriverPodName == "" {
		c.DriverPodName = c.Conf[KeyDriverPodName]
	}
	if c.DriverPodName == "" && c.ObjectKind == "SparkApplication" {
		c.DriverPodName = c.Name + "-driver"
	}
	return nil
}

// webhookSlot places additions where the kubeflow mutating webhook picks them up
// (internal/webhook/sparkpod_defaulter.go): addInitContainers appends
// driver.initContainers; addVolumes adds a spec.volumes entry only when driver.volumeMounts
// mounts it (into the Spark container); addPodLifeCycleConfig replaces the Spark
// container's lifecycle with driver.lifecycle. Labels go through driver.labels
// (→ spark.kubernetes.driver.label.*, no webhook needed).
func (c *Carrier) webhookSlot(s Slot, create bool) (*yaml.Node, string, error) {
	switch s {
	case SlotInitContainers:
		return c.walkSeq(create, cat(c.base, "driver", "initContainers")...)
	case SlotVolumes:
		return c.walkSeq(create, cat(c.base, "volumes")...)
	case SlotDriverContainer:
		return c.walk(create, cat(c.base, "driver")...)
	case SlotPodLabels:
		return c.walk(create, cat(c.base, "driver", "labels")...)
	case SlotPodSpec:
		return nil, "", ErrNoPodSpec
	}
	return nil, "", errors.New("app: unknown slot")
}

// TemplateInjectionRefused reports a kubeflow carrier on the template injection whose
// spec.sparkVersion is below 3: the operator's validating webhook refuses a driver template
// for it ("pod template feature requires Spark version 3.0.0 or higher",
// internal/webhook/sparkapplication_validator.go), so only the webhook injection can carry the
// additions. An unreadable version is not reported here.
func (c *Carrier) TemplateInjectionRefused() bool {
	if c.Kind != KindKubeflow || c.Injection != InjectTemplate {
		return false
	}
	major, _, _ := strings.Cut(strings.TrimPrefix(c.SparkVersion, "v"), ".")
	n, err := strconv.Atoi(major)
	return err == nil && n < 3
}

// OtherInjection is a kubeflow carrier read with the injection not in use (its Lookup finds the other
// injection's slots), nil for every other carrier.
func (c *Carrier) OtherInjection() *Carrier {
	if c.Kind != KindKubeflow {
		return nil
	}
	o := *c
	o.Injection = InjectWebhook
	if c.Injection == InjectWebhook {
		o.Injection = InjectTemplate
	}
	return &o
}
