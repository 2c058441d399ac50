package examples_test

import ()

func kubeflowApp(kind, extra string) string { return kubeflowAppWith(kind, "", extra) }

// kubeflowAppWith: driver continues the driver's flow mapping.
func kubeflowAppWith(kind, driver, extra string) string {
	return `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ` + kind + `
metadata: {name: pi, namespace: analytics}
spec:
  type: Scala
  mode: cluster
  image: spark:3.5.5
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  sparkVersion: 3.5.5
  driver: {cores: 1, memory: 512m, serviceAccount: pi-driver` + driver + `}
  executor: {cores: 1, instances: 1, memory: 512m}` + extra + "\n"
}

func kubeflowScheduled(policy, conf string) string { return kubeflowScheduledWith(policy, "", conf) }

func kubeflowScheduledWith(policy, driver, conf string) string {
	return `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi-nightly, namespace: analytics}
spec:
  schedule: "@every 1h"
  ` + policy + `
  template:
    type: Scala
    mode: cluster
    image: spark:3.5.5
    mainClass: org.apache.spark.examples.SparkPi
    mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
    sparkVersion: 3.5.5
    driver: {cores: 1, memory: 512m` + driver + `}
    executor: {cores: 1, instances: 1, memory: 512m}` + conf + "\n"
}

// sparkConnect: template is the server's pod template, under spec.server.template.
func sparkConnect(template string) string {
	return `apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata: {name: spark-connect, namespace: analytics}
spec:
  sparkVersion: 4.0.1
  server:
    template:` + template + `
  executor: {instances: 1, cores: 1, memory: 512m}
`
}

// stackableApp: conf is one sparkConf entry ("" none), extra more of the spec.
func stackableApp(conf, extra string) string {
	if conf != "" {
		conf = "\n  sparkConf: {" + conf + "}"
	}
	return `apiVersion: spark.stackable.tech/v1alpha1
kind: SparkApplication
metadata: {name: pyspark-pi, namespace: analytics}
spec:
  mode: cluster
  sparkImage: {productVersion: 3.5.6}
  mainApplicationFile: local:///stackable/spark/examples/src/main/python/pi.py` + conf + extra + "\n"
}

// binderRole is a Role labelled as sparkui's binder Role with rules ("" none).
func binderRole(rules string) string {
	if rules == "" {
		rules = " []"
	}
	return `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pi-ui-svc-binder
  namespace: analytics
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-0123456789abcdef}
rules:` + rules + "\n"
}

func apacheApp(version, extra string) string {
	return `apiVersion: spark.apache.org/` + version + `
kind: SparkApplication
metadata: {name: pi, namespace: analytics}
spec:
  mainClass: org.apache.spark.examples.SparkPi
  jars: local:///opt/spark/examples/jars/spark-examples.jar
  runtimeVersions: {sparkVersion: 4.1.1}` + extra + "\n"
}
