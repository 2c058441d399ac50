package app

import "github.com/sparkui/sparkui/internal/fieldpath"

// The Apache spark-kubernetes-operator (github.com/apache/spark-kubernetes-operator, tag
// 1.0.0). It builds the driver in-process with Spark's own KubernetesDriverBuilder from
// spec.driverSpec.podTemplateSpec and spec.sparkConf (SparkAppSubmissionWorker.java
// buildDriverConf, SparkAppResourceSpecFactory.java buildResourceSpec).

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
