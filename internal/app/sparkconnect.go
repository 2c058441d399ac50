package app

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// kubeflow's SparkConnect (github.com/kubeflow/spark-operator, api/v1alpha1/sparkconnect_types.go,
// added in v2.3.0; read at 38082f33 as kubeflow.go). Its controller
// (internal/controller/sparkconnect/reconciler.go mutateServerPod, options.go
// buildStartConnectServerArgs) creates one Pod <name>-server: labels, annotations and spec
// copied from spec.server.template, a container named spark-kubernetes-driver added when the
// template has none, and in the server container (that one, else the first) its command and
// args replaced by start-connect-server.sh, its whole lifecycle replaced by the operator's
// preStop hook, env and one volumeMount appended. The driver runs in that Pod in client mode.

// sparkConnectAdapter: the operator makes one Pod <name>-server from spec.server.template
// and runs the driver in it in client mode, as a workload's Pod does. The Pod's name is fixed
// and only one exists at a time, so no run label is needed; the operator sets
// spark-role=connect-server over the template's and replaces the server container's
// lifecycle.
var sparkConnectAdapter = &Adapter{kind: KindWorkload, group: kubeflowGroup, versions: []string{"v1alpha1"}, objectKind: "SparkConnect", resource: "sparkconnects",
	base: []string{"spec", "server", "template"}, podSpec: []string{"spec"},
	caps: CapOperatorContainer | CapOperatorLifecycle | CapConfAppID | CapCustomResource,
	role: connectRole, operatorServices: connectServices, operatorUI: connectOperatorUI,
	admission: &Admission{Name: "sparkconnect", PodSpec: "object.spec.server.template.spec", PodRequired: "object.spec.server", PodOpen: "object.spec.server.template"},
	onUpdate:  sparkConnectUpdate,
	detect:    func(c *Carrier, _ CarrierOptions) (bool, error) { return true, c.detectSparkConnect() }}

// connectOperatorUI: the server Service's port web-ui targets 4040 whatever the UI bound
// (reconciler.go createOrUpdateServerService).
func connectOperatorUI(c *Carrier, uiService, _ string) []string {
	var out []string
	for svc := range c.OperatorServices() {
		out = append(out, "the kubeflow operator also creates the SparkConnect server Service "+svc+
			", whose port web-ui targets 4040 whatever the UI bound (spark.ui.port, port+N, TLS): use "+uiService+" for the UI")
	}
	return out
}

const (
	// connectRole is the spark-role the operator puts on the server Pod over the template's
	// (util.go GetServerSelectorLabels, common.SparkRoleConnectServer).
	connectRole = "connect-server"
)

// connectConf is what the operator passes to start-connect-server.sh after spec.sparkConf
// (options.go driverConfOption comes after sparkConfOption, and spark-submit keeps the last
// --conf of a key): the driver's RPC and block-manager ports, which the runtime must never
// probe, and the server Pod's name (sparkConfOption also drops a user's
// spark.kubernetes.driver.pod.name).
func connectConf(name string) map[string]string {
	return map[string]string{
		sparkconf.KeyDriverPort:             "7078",
		sparkconf.KeyDriverBlockManagerPort: "7079",
		KeyDriverPodName:                    name + "-server",
	}
}

// connectServices is the server Service the controller creates (createOrUpdateServerService,
// util.go GetServerServiceName): spec.server.service's name when spec.server.service is
// set, else <name>-server. Read leniently: detection reports a bad shape.
func connectServices(obj *yaml.RNode, name string) map[string]string {
	svc := name + "-server"
	if s := yamlx.Get(obj.YNode(), "spec", "server", "service"); !yamlx.IsNull(s) {
		svc = yamlx.GetStr(s, "metadata", "name")
	}
	if svc == "" {
		return nil
	}
	return map[string]string{svc: "the kubeflow spark-operator's server Service of SparkConnect " + name +
		" (<name>-server, or spec.server.service.metadata.name)"}
}

// detectSparkConnect reads a SparkConnect. The ServiceAccount is the template's
// serviceAccountName: the CRD has no field of its own for it, and in client mode Spark's
// spark.kubernetes.authenticate.driver.serviceAccountName creates no Pod.
func (c *Carrier) detectSparkConnect() error {
	var err error
	if c.Conf, err = c.readStringMap("spec", "sparkConf"); err != nil {
		return err
	}
	c.ConfPath = "spec.sparkConf"
	for k, v := range connectConf(c.Name) {
		c.Conf[k] = v
	}
	// start-connect-server.sh runs spark-submit without --deploy-mode: client, the only mode a
	// Connect server accepts (SparkSubmit refuses cluster mode for it).
	c.DeployMode = "client"
	c.Conf[sparkconf.KeyDeployMode] = c.DeployMode
	c.readIPFamilies()
	c.MainClass = ConnectServerClass
	c.DriverPodName = c.Name + "-server"
	c.SparkVersionPath = "spec.sparkVersion"
	if c.SparkVersion, err = c.readScalar("spec", "sparkVersion"); err != nil {
		return err
	}
	if _, _, err = c.walk(false, "spec", "server", "service", "metadata"); err != nil {
		return err
	}
	if _, err = c.readScalar("spec", "server", "service", "metadata", "name"); err != nil {
		return err
	}
	c.ServiceAccount, c.ServiceAccountPath, c.HostNetwork, err = c.readPodSpecFacts()
	return err
}

// sparkConnectUpdate: the SparkConnect controller (v2.5.2, internal/controller/sparkconnect/
// reconciler.go) runs createOrUpdateServerPod on every reconcile, but mutateServerPod copies
// spec.server.template and builds the command only while the Pod has no creationTimestamp:
// an existing server Pod keeps what it was created with. Its conf ConfigMap is updated
// (createOrUpdateConfigMap), but Spark reads its conf at start. Its Pod watch (SetupWithManager,
// DeleteFunc by the connect-name label) reconciles the SparkConnect when the server Pod is
// deleted, and createOrUpdateServerPod then builds a new one from the current spec: deleting
// the Pod is the way to apply the change (shown on the node: runtime/nodetest
// carriers_sparkconnect_test.go neverApplied).
func sparkConnectUpdate(_ *Carrier, _ []string) Update {
	return Update{Effect: UpdateNeverApplied, Says: "the kubeflow operator builds the SparkConnect server Pod only when the Pod does not exist (reconciler.go mutateServerPod): the running server never gets the change, and nothing says so, until its Pod <name>-server is deleted and the operator builds it again from the current spec"}
}
