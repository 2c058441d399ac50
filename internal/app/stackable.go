package app

import (
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// Stackable's operator for Apache Spark (github.com/stackabletech/spark-k8s-operator, read at
// 405d5514, June 2026; OSL-3.0: read for its facts, nothing copied). For a
// spark.stackable.tech/v1alpha1 SparkApplication it creates a ServiceAccount and RoleBinding
// named after the application, a ConfigMap per role holding a pod template, and a Job running
// spark-submit in cluster mode (rust/operator-binary/src/spark_k8s_controller.rs reconcile,
// spark_job). Spark then creates the driver Pod from the driver's template:
//   - the template has one container, "spark" (crd/roles.rs SparkContainer::Spark), runs as the
//     application's ServiceAccount, and has spec.driver.podOverrides merged over it last
//     (spark_k8s_controller.rs pod_template: pod_template.merge_from(pod_overrides)).
//     k8s-openapi's DeepMerge merges containers, initContainers and volumes by name and
//     volumeMounts by mountPath (the API's list-map keys), so a native sidecar, a volume, a
//     mount and a preStop hook written into podOverrides land in the driver Pod next to the
//     operator's own;
//   - spark-submit gets --conf spark.kubernetes.driver.podTemplateFile=<that template> and
//     podTemplateContainerName=spark, then every spec.sparkConf entry (crd/mod.rs
//     build_command): spark-submit keeps the last --conf of a key, so a user's key wins;
//   - it creates no Service of its own for the application: Spark's headless
//     <prefix>-driver-svc is the only one, and its spark-app-selector is new every submission;
//   - its driver Pod controller sets the application's phase from the driver Pod's and
//     deletes the Pod once it has Succeeded or Failed (pod_driver_controller.rs).

// KindStackable is a spark.stackable.tech/v1alpha1 SparkApplication.
const KindStackable CarrierKind = "stackable"

var stackableAdapter = &Adapter{kind: KindStackable, group: "spark.stackable.tech", versions: []string{"v1alpha1"}, objectKind: "SparkApplication", resource: "sparkapplications",
	base: []string{"spec"}, podSpec: []string{"driver", "podOverrides", "spec"}, container: "spark", containerFromConf: true,
	caps:     CapOperatorContainer | CapSparkSubmitsFromConf | CapCustomResource,
	runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID,
	fields: map[string][]string{FieldDeployMode: {"mode"}},
	notes: map[string]string{
		"SUI034": " comes after the operator's own spark.kubernetes.driver.podTemplateFile on the spark-submit command line and replaces the template it builds from spec.driver.podOverrides, where sparkui puts the runtime: drop the key and move the file's content into spec.driver.podOverrides",
	},
	admission: &Admission{Name: "stackable", Spec: "object.spec",
		PodSpec: "object.spec.driver.podOverrides.spec", PodRequired: "object.spec", PodOpen: "object.spec.driver.podOverrides"},
	onUpdate: stackableUpdate,
	detect:   func(c *Carrier, _ CarrierOptions) (bool, error) { return true, c.detectStackable() }}

// detectStackable reads the application: spec.sparkConf, spec.mode (cluster|client, required
// by the CRD), spec.mainClass, the Spark version (spec.sparkImage.productVersion) and the
// driver's podOverrides.
func (c *Carrier) detectStackable() error {
	var err error
	if c.Conf, err = c.readStringMap("spec", "sparkConf"); err != nil {
		return err
	}
	c.ConfPath = "spec.sparkConf"
	c.readIPFamilies()
	if c.DeployMode, err = c.readScalar("spec", "mode"); err != nil {
		return err
	}
	if c.DeployMode == "" {
		c.DeployMode = "cluster"
	}
	c.MainClassPath, c.SparkVersionPath = "spec.mainClass", "spec.sparkImage.productVersion"
	if c.MainClass, err = c.readScalar("spec", "mainClass"); err != nil {
		return err
	}
	if c.SparkVersion, err = c.readScalar("spec", "sparkImage", "productVersion"); err != nil {
		return err
	}
	if _, _, err = c.walk(false, "spec", "driver"); err != nil {
		return err
	}
	sa, saPath, hostNet, err := c.readPodSpecFacts()
	if err != nil {
		return err
	}
	c.HostNetwork = hostNet
	// The ServiceAccount: Spark's conf key over the template's serviceAccountName, which is
	// podOverrides' when set, else the operator's own, named after the application.
	switch {
	case c.Conf[KeyDriverSA] != "":
		c.ServiceAccount, c.ServiceAccountPath = c.Conf[KeyDriverSA], fieldpath.Key(c.ConfPath, KeyDriverSA)
	case sa != "":
		c.ServiceAccount, c.ServiceAccountPath = sa, saPath
	default:
		c.ServiceAccount = c.Name
	}
	// The driver is <app name>-<random>-driver (Spark's KubernetesClientApplication) unless
	// the conf names it.
	c.DriverPodName = c.Conf[KeyDriverPodName]
	return nil
}

// stackableUpdate: once the operator has created the spark-submit Job it patches a status,
// and every later reconcile stops at k8s_job_has_been_created (spark_k8s_controller.rs
// reconcile; crd/mod.rs: "has been created" is a non-empty status phase, the fix of its
// issue #457): the application is never submitted again from a changed spec. Its own docs say
// the operator never reconciles an application once it has been created.
func stackableUpdate(_ *Carrier, _ []string) Update {
	return Update{Effect: UpdateNeverApplied, Says: "the Stackable operator never reconciles a SparkApplication after it created its Job (spark_k8s_controller.rs reconcile, k8s_job_has_been_created): the change is never applied, and nothing says so, until the SparkApplication is deleted and created again"}
}
