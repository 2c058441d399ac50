package examples_test

import ()

// admissionCases are one manifest per admission policy that the policy refuses (an error
// rule) or warns about (a warning rule): the policy named by the key must answer it with its
// rule's id.
var admissionCases = map[string]string{
	"sparkui-sui004-ui-service": `apiVersion: v1
kind: Service
metadata:
  name: pi-ui-svc
  namespace: analytics
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-0123456789abcdef}
  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}
spec:
  selector: {spark-app-selector: spark-0123456789abcdef, spark-role: driver}
  ports: [{name: spark-ui, protocol: TCP, port: 4040}]
`,
	"sparkui-sui040-ui-service": `apiVersion: v1
kind: Service
metadata:
  name: lab-sparkui-ui-svc
  namespace: notebooks
  labels: {app.kubernetes.io/managed-by: sparkui, sparkui.dev/application: lab}
  annotations: {kustomize.toolkit.fluxcd.io/ssa: Override}
spec:
  ports: [{name: spark-ui, protocol: TCP, port: 4040}]
`,
	"sparkui-sui011-pod": `apiVersion: v1
kind: Pod
metadata:
  name: pi-driver
  namespace: analytics
  labels: {spark-role: driver, spark-app-selector: spark-0123456789abcdef}
spec:
  hostNetwork: true
  containers:
  - name: spark-kubernetes-driver
    image: spark:3.5.5
    ports: [{name: driver-rpc-port, containerPort: 7078}]
`,
	"sparkui-sui011-workload": `apiVersion: apps/v1
kind: Deployment
metadata: {name: connect, namespace: platform}
spec:
  strategy: {type: Recreate}
  selector: {matchLabels: {app: connect}}
  template:
    metadata: {labels: {app: connect, spark-role: driver}}
    spec:
      hostNetwork: true
      containers: [{name: connect, image: spark:4.0.1, ports: [{name: spark-connect, containerPort: 15002}]}]
`,
	"sparkui-sui011-job": `apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: batch}
spec:
  template:
    metadata: {labels: {spark-role: driver}}
    spec:
      hostNetwork: true
      restartPolicy: Never
      containers: [{name: driver, image: spark:3.5.5, ports: [{name: spark-ui, containerPort: 4040}]}]
`,
	"sparkui-sui011-cronjob": `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: batch}
spec:
  schedule: "0 2 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        metadata: {labels: {spark-role: driver}}
        spec:
          hostNetwork: true
          restartPolicy: Never
          containers: [{name: driver, image: spark:3.5.5, ports: [{name: spark-ui, containerPort: 4040}]}]
`,
	"sparkui-sui031-kubeflow": kubeflowApp("SparkApplication", `
  sparkConf: {spark.ui.port: "0"}`),
	"sparkui-sui031-kubeflow-scheduled": kubeflowScheduled(`concurrencyPolicy: Forbid`, `
    sparkConf: {spark.ui.port: "+00"}`),
	"sparkui-sui031-apache": apacheApp("v1beta1", `
  sparkConf: {spark.ui.port: "0"}`),
	"sparkui-sui037-apache": apacheApp("v1", `
  deploymentMode: ClientMode`),
	"sparkui-sui034-kubeflow": kubeflowApp("SparkApplication", `
  sparkConf: {spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml}`),
	"sparkui-sui034-kubeflow-scheduled": kubeflowScheduled(`concurrencyPolicy: Forbid`, `
    sparkConf: {spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml}`),
	"sparkui-sui034-apache": apacheApp("v1", `
  sparkConf: {spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml}`),
	"sparkui-sui035-workload": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: lab, namespace: notebooks}
spec:
  serviceName: lab
  replicas: 2
  selector: {matchLabels: {app: lab}}
  template:
    metadata: {labels: {app: lab, spark-role: driver}}
    spec:
      containers: [{name: notebook, image: quay.io/jupyter/pyspark-notebook:spark-3.5.5}]
`,
	"sparkui-sui035-job": `apiVersion: batch/v1
kind: Job
metadata: {name: nightly, namespace: batch}
spec:
  parallelism: 3
  template:
    metadata: {labels: {spark-role: driver}}
    spec:
      restartPolicy: Never
      containers: [{name: driver, image: spark:3.5.5}]
`,
	"sparkui-sui035-cronjob": `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: batch}
spec:
  schedule: "0 2 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      parallelism: 2
      template:
        metadata: {labels: {spark-role: driver}}
        spec:
          restartPolicy: Never
          containers: [{name: driver, image: spark:3.5.5}]
`,
	"sparkui-sui036-deployment": `apiVersion: apps/v1
kind: Deployment
metadata: {name: connect, namespace: platform}
spec:
  selector: {matchLabels: {app: connect}}
  template:
    metadata: {labels: {app: connect, spark-role: driver}}
    spec:
      containers: [{name: connect, image: spark:4.0.1}]
`,
	"sparkui-sui036-cronjob": `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: batch}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        metadata: {labels: {spark-role: driver}}
        spec:
          restartPolicy: Never
          containers: [{name: driver, image: spark:3.5.5}]
`,
	"sparkui-sui036-kubeflow-scheduled": kubeflowScheduled(`concurrencyPolicy: Allow`, ``),
	// kubeflow's own driver.hostNetwork puts the driver on the host network as the
	// template's does (its webhook applies it).
	"sparkui-sui011-kubeflow": kubeflowAppWith("SparkApplication", `, hostNetwork: true,
    template: {spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: driver-rpc-port, containerPort: 7078}]}]}}`, ``),
	"sparkui-sui011-kubeflow-scheduled": kubeflowScheduledWith(`concurrencyPolicy: Forbid`, `,
      template: {spec: {hostNetwork: true, containers: [{name: spark-kubernetes-driver, ports: [{name: spark-ui, containerPort: 4040}]}]}}`, ``),
	"sparkui-sui011-apache": apacheApp("v1", `
  driverSpec:
    podTemplateSpec:
      spec:
        hostNetwork: true
        containers: [{name: spark-kubernetes-driver, ports: [{name: spark-ui, containerPort: 4040}]}]`),
	"sparkui-sui011-sparkconnect": sparkConnect(`
      spec:
        hostNetwork: true
        containers: [{name: spark-kubernetes-driver, image: spark:4.0.1, ports: [{name: spark-connect, containerPort: 15002}]}]`),
	"sparkui-sui011-stackable": stackableApp(``, `
  driver:
    podOverrides:
      spec:
        hostNetwork: true
        containers: [{name: spark, ports: [{name: spark-ui, containerPort: 4040}]}]`),
	"sparkui-sui031-stackable": stackableApp(`spark.ui.port: "-0"`, ``),
	"sparkui-sui034-stackable": stackableApp(`spark.kubernetes.driver.podTemplateFile: /opt/spark/conf/driver.yaml`, ``),
	// The mutation issue 34 names: the resourceNames line removed, every Service granted.
	"sparkui-sui061-binder-role": binderRole(`
- apiGroups: [""]
  resources: [services]
  verbs: [get, patch]`),
}

// refusedCases are more manifests the policy named by the key must answer (as its case in
// admissionCases), each a way the one rule can grant more than it should.
var refusedCases = map[string][]string{
	"sparkui-sui061-binder-role": {
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: ["*"]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch, delete]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc, other-ui-svc]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [kubernetes]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: ["", apps]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: [""]
  resources: [services, pods]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`),
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get]`),
		binderRole(``),
		// The events rule widened, or beside a third rule, or the events rule alone.
		binderRole(svcRule + `
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch, delete]`),
		binderRole(svcRule + `
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]`),
		binderRole(svcRule + `
- apiGroups: [events.k8s.io, ""]
  resources: [events]
  verbs: [create, patch]`),
		binderRole(svcRule + `
- apiGroups: [events.k8s.io]
  resources: [events, pods]
  verbs: [create, patch]`),
		binderRole(svcRule + `
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [create, patch]`),
		binderRole(svcRule + eventsRule + eventsRule),
		binderRole(svcRule + eventsRule + `
- apiGroups: [""]
  resources: [pods]
  verbs: [get]`),
		binderRole(eventsRule),
		binderRole(svcRule + svcRule),
	},
}

// svcRule and eventsRule are the two rules sparkui-fn writes into its Role (events on).
const (
	svcRule = `
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`
	eventsRule = `
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]`
)

// admittedCases are manifests the policy named by the key admits, and no other sparkui
// policy answers, nor does the function report the policy's rule for them: the near misses
// of its bad manifest, and the objects that leave out the optional fields its expressions
// read (which must be guarded: an expression that fails refuses, failurePolicy Fail).
var admittedCases = map[string][]string{
	"sparkui-sui011-kubeflow": {
		// No template: nothing the function reads as the driver's containers (driver.ports
		// is the webhook's, which the rule does not look at).
		kubeflowAppWith("SparkApplication", `, hostNetwork: true, ports: [{name: extra, containerPort: 9090, protocol: TCP}]`, ``),
		kubeflowAppWith("SparkApplication", `, hostNetwork: true, template: {metadata: {labels: {team: data}}}`, ``),
		kubeflowAppWith("SparkApplication", `, hostNetwork: false,
    template: {spec: {containers: [{name: spark-kubernetes-driver, ports: [{name: driver-rpc-port, containerPort: 7078}]}]}}`, ``),
		kubeflowAppWith("SparkApplication", `, template: {spec: {hostNetwork: true, containers: [{name: spark-kubernetes-driver}]}}`, ``),
	},
	"sparkui-sui011-kubeflow-scheduled": {
		kubeflowScheduled(`concurrencyPolicy: Forbid`, ``),
		kubeflowScheduledWith(`concurrencyPolicy: Forbid`, `, hostNetwork: true, template: {spec: {nodeSelector: {pool: spark}}}`, ``),
	},
	"sparkui-sui011-apache": {
		apacheApp("v1beta1", ``),
		`apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: empty, namespace: analytics}
`,
		apacheApp("v1", `
  driverSpec: {podTemplateSpec: {metadata: {labels: {team: data}}}}`),
		apacheApp("v1", `
  driverSpec: {podTemplateSpec: {spec: {hostNetwork: true}}}`),
	},
	"sparkui-sui011-sparkconnect": {
		sparkConnect(`
      metadata: {labels: {team: data}}`),
		sparkConnect(`
      spec:
        containers: [{name: spark-kubernetes-driver, image: spark:4.0.1, ports: [{name: spark-connect, containerPort: 15002}]}]`),
	},
	"sparkui-sui011-stackable": {
		stackableApp(``, ``),
		stackableApp(``, `
  driver: null`),
		stackableApp(``, `
  driver: {podOverrides: {metadata: {labels: {team: data}}}}`),
		stackableApp(``, `
  driver:
    podOverrides:
      spec:
        hostNetwork: true
        containers: [{name: spark, env: [{name: TZ, value: UTC}]}]`),
	},
	"sparkui-sui031-stackable": {stackableApp(`spark.ui.port: "4050"`, ``)},
	"sparkui-sui061-binder-role": {
		// What transform/rbac.go writes.
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [get, patch]`),
		// What it writes with Events on, in either order, the verbs in any order.
		binderRole(svcRule + eventsRule),
		binderRole(eventsRule + `
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [patch, get]`),
		binderRole(svcRule + `
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [patch, create, create]`),
		// Order and a repeated verb grant nothing more.
		binderRole(`
- apiGroups: [""]
  resources: [services]
  resourceNames: [pi-ui-svc]
  verbs: [patch, get, get]`),
		// Not labelled as sparkui's: the user's own Role, which the policy does not select.
		`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pi-extra, namespace: analytics}
rules:
- apiGroups: [""]
  resources: [services]
  verbs: [get, patch, delete]
`,
	},
	"sparkui-sui034-stackable": {stackableApp(`spark.executor.memory: 1g`, ``)},
}
