package app

import (
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// The Apache spark-kubernetes-operator (github.com/apache/spark-kubernetes-operator, tag
// 1.0.0). It builds the driver in-process with Spark's own KubernetesDriverBuilder from
// spec.driverSpec.podTemplateSpec and spec.sparkConf (SparkAppSubmissionWorker.java
// buildDriverConf, SparkAppResourceSpecFactory.java buildResourceSpec).

// KindApache is a spark.apache.org/v1 or v1beta1 SparkApplication.
const KindApache CarrierKind = "apache"

// apacheAdapter: Spark's spark-app-selector is <name>-<attempt>, new every attempt. The
// operator does not set podTemplateContainerName: a user's, in sparkConf, is what Spark and
// the operator's ModelUtils both read, and transform pins it (CapPinContainer). The conf is
// where the driver's ServiceAccount belongs (the upstream examples set it).
var apacheAdapter = &Adapter{kind: KindApache, group: "spark.apache.org", versions: []string{"v1", "v1beta1"}, objectKind: "SparkApplication", resource: "sparkapplications",
	base: []string{"spec"}, podSpec: []string{"driverSpec", "podTemplateSpec", "spec"},
	caps:     CapOperatorContainer | CapPinContainer | CapSparkSubmitsFromConf | CapCustomResource,
	runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID, saConf: true, containerFromConf: true,
	// spark-submission-worker's DriverServiceIngressUtils.buildIngressService makes a Service
	// and an Ingress or HTTPRoute per entry (SUI048).
	fields: map[string][]string{FieldServiceIngressList: {"driverServiceIngressList"}, FieldHTTPRouteList: {"driverHttpRouteList"}, FieldDeployMode: {"deploymentMode"}},
	notes: map[string]string{
		// The operator only checks its own overrides for an existing file, never
		// spec.sparkConf (SparkAppResourceSpecFactory.java getOrCreateLocalFileForDriverSpec),
		// and its overrides are set after sparkConf (SparkAppSubmissionWorker.java
		// buildDriverConf): with a podTemplateSpec, which sparkui always writes, the user's
		// file is never read.
		"SUI034": " is overridden by the file the Apache operator writes from spec.driverSpec.podTemplateSpec, which sparkui uses for the sidecar: move its content into spec.driverSpec.podTemplateSpec",
		// AppValidateStep.java fails ClientMode ("Client mode is not supported yet.").
		"SUI037": "deploymentMode ClientMode: the Apache operator fails the application (\"Client mode is not supported yet.\") and no driver runs; use ClusterMode",
	},
	admission: &Admission{Name: "apache", Spec: "object.spec", Guard: "!has(object.spec) || ", ClientMode: "ClientMode",
		PodSpec: "object.spec.driverSpec.podTemplateSpec.spec", PodRequired: "object"},
	onUpdate: apacheUpdate,
	detect:   func(c *Carrier, _ CarrierOptions) (bool, error) { return true, c.detectApache() }}

// detectApache reads a spark.apache.org/v1 or v1beta1 SparkApplication. Both versions have
// the same driverSpec, sparkConf, mainClass and deploymentMode.
func (c *Carrier) detectApache() error {
	var err error
	if c.Conf, err = c.readStringMap("spec", "sparkConf"); err != nil {
		return err
	}
	c.ConfPath = "spec.sparkConf"
	c.readIPFamilies()

	// deploymentMode is ClientMode|ClusterMode, ClusterMode by default (ApplicationSpec);
	// AppValidateStep.java fails ClientMode ("Client mode is not supported yet.").
	mode, err := c.readScalar("spec", "deploymentMode")
	if err != nil {
		return err
	}
	c.DeployMode = "cluster"
	if mode == "ClientMode" {
		c.DeployMode = "client"
	}
	c.MainClassPath, c.SparkVersionPath = "spec.mainClass", "spec.runtimeVersions.sparkVersion"
	if c.MainClass, err = c.readScalar("spec", "mainClass"); err != nil {
		return err
	}
	if c.SparkVersion, err = c.readScalar("spec", "runtimeVersions", "sparkVersion"); err != nil {
		return err
	}
	if _, _, err = c.walk(false, "spec", "driverSpec"); err != nil {
		return err
	}
	tmplSA, tmplSAPath, hostNet, err := c.readPodSpecFacts()
	if err != nil {
		return err
	}
	c.HostNetwork = hostNet
	// The conf, when set, overrides the template's serviceAccountName (Spark
	// DriverKubernetesCredentialsFeatureStep → KubernetesUtils.buildPodWithServiceAccount);
	// the upstream examples set the conf.
	if sa := c.Conf[KeyDriverSA]; sa != "" {
		c.ServiceAccount, c.ServiceAccountPath = sa, fieldpath.Key(c.ConfPath, KeyDriverSA)
	} else {
		c.ServiceAccount, c.ServiceAccountPath = tmplSA, tmplSAPath
	}
	// The driver is `<app id>-driver`, the app id `<name>-<attempt>` (hashed past 46
	// characters): known before the run only when the conf fixes it.
	c.DriverPodName = c.Conf[KeyDriverPodName]
	return nil
}

// apacheUpdate: the Apache operator builds the driver and its resources from the spec only
// when an attempt starts (spark-operator/.../reconciler/reconcilesteps/AppInitStep.java
// reconcile: nothing unless the state summary is initializing, and getOrCreateSecondaryResource
// keeps an existing driver Pod); a running attempt never reads the spec again, so a change
// reaches the next attempt (a restart by spec.applicationTolerations.restartConfig).
func apacheUpdate(_ *Carrier, _ []string) Update {
	return Update{Effect: UpdateNextRun, Says: "the Apache operator builds the driver only when an attempt starts (AppInitStep): the running attempt is left alone, the next attempt (a restart under applicationTolerations.restartConfig) uses it; a finished application without a restart left never does"}
}
