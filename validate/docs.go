package validate

import "strings"

// Doc explains a rule to the people who meet its findings: what it catches, the failure in a
// running cluster it prevents, and how to fix it. The SARIF report carries it as each rule's
// fullDescription and help, and docs/rules.md repeats it word for word (rules_doc_test.go
// checks that), so the two cannot drift.
type Doc struct {
	// Name is a PascalCase identifier (SARIF reportingDescriptor.name).
	Name    string
	Catches string
	Why     string
	Fix     string
}

// HelpURI is where a rule's section of docs/rules.md is published.
func HelpURI(id string) string {
	return "https://github.com/sparkui/sparkui/blob/main/docs/rules.md#" + strings.ToLower(id)
}

// Docs holds one entry per rule of Rules.
var Docs = map[string]Doc{
	"SUI001": {
		Name:    "ZeroContainerPort",
		Catches: "A port of the driver container with containerPort 0 (or no containerPort): what spark-submit writes for spark.ui.port=0.",
		Why:     "The API server rejects the whole Pod (422: containerPort must be between 1 and 65535), so the application never starts.",
		Fix:     "Remove that port entry: a random port cannot be declared. sparkui-fn (transform mode) drops it; with a fixed spark.ui.port, declare that port instead.",
	},
	"SUI002": {
		Name:    "ZeroServicePort",
		Catches: "A port of a Service that selects a driver Pod with port 0 (or no port), or with an explicit targetPort 0.",
		Why:     "The API server rejects the Service (422), so spark-submit fails to create the driver Service the executors reach the driver through, or the apply of the manifests fails.",
		Fix:     "Remove the port entry whose port is 0, and drop an explicit targetPort: 0 (it then defaults to the port). sparkui-fn (transform mode) does both; the UI is published by the UI Service instead.",
	},
	"SUI003": {
		Name:    "UIServiceWithoutUI",
		Catches: "A sparkui UI Service for an application whose spark.ui.enabled is false.",
		Why:     "No UI will ever bind: the Service stays without endpoints for good, and whoever follows its name to the UI finds nothing; its Role, RoleBinding and runtime sidecar are dead weight.",
		Fix:     "Remove the UI Service, its Role and RoleBinding and the runtime sidecar (sparkui-fn in transform mode removes them and reports each removal as SUI003 info), or enable the UI again.",
	},
	"SUI004": {
		Name:    "UIServiceSelector",
		Catches: "A UI Service that declares a non-empty spec.selector in the manifests.",
		Why:     "The Service routes traffic as soon as it is applied, to whatever listens on the target port before the UI is up (under hostNetwork possibly another application's UI on the same node), and the runtime's guarded patch expects to set the selector itself.",
		Fix:     "Remove spec.selector: the runtime sets the selector and the targetPort in one patch once it has found this application's UI.",
	},
	"SUI005": {
		Name:    "UIServiceIPFamilies",
		Catches: "A UI Service whose spec.ipFamilyPolicy or spec.ipFamilies (including their order) differ from the driver Service's.",
		Why:     "On a dual-stack cluster the UI Service's primary cluster IP is then of another family than the driver's address; on a single-stack cluster a family the cluster lacks is refused.",
		Fix:     "Copy ipFamilyPolicy and ipFamilies, in order, from the driver Service (spark.kubernetes.driver.service.ipFamilyPolicy and .ipFamilies); sparkui-fn does.",
	},
	"SUI006": {
		Name:    "UIServiceName",
		Catches: "A UI Service name that is not a DNS-1035 label, or that another Service in the same namespace of the input also has.",
		Why:     "An invalid name is rejected by the API server; a shared name makes one apply overwrite the other Service, breaking whichever was there first.",
		Fix:     "Let sparkui-fn name it (<prefix>-ui-svc, or a deterministic hashed name when that is taken, too long or invalid), or rename the Service, the Role's resourceNames and the runtime's --service together.",
	},
	"SUI007": {
		Name:    "UIServiceRBAC",
		Catches: "The driver Pod's ServiceAccount is not granted get and patch on its UI Service by the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in the input (subjects by ServiceAccount, user name and groups; wildcards; resourceNames; the binding's namespace; ClusterRole aggregation).",
		Why:     "The runtime's bind and withdraw requests are refused with 403: the UI Service never gets endpoints, and at shutdown it cannot be withdrawn.",
		Fix:     "Bind a Role granting get and patch on services, resourceNames: [the UI Service], to the driver's ServiceAccount in the UI Service's namespace (sparkui-fn adds one with rbac.create: true). With rbac.create: false the grant may live outside the input and the finding is a warning.",
	},
	"SUI008": {
		Name:    "UIServiceWithoutRuntime",
		Catches: "A UI Service whose driver Pod has no sparkui-runtime sidecar.",
		Why:     "The UI Service starts without a selector and only the runtime sets one: without the runtime the Service never has endpoints.",
		Fix:     "Run sparkui-fn in transform mode on the manifests (it adds the sidecar), or remove the UI Service.",
	},
	"SUI009": {
		Name:    "RuntimeSettings",
		Catches: "A runtime sidecar whose arguments (--service, --app-id, --ui-port, --max-retries, --tls, --ssl-ui-port, --host-network) disagree with the application, that is not a native sidecar (restartPolicy: Always), that lacks POD_NAME, POD_NAMESPACE and POD_UID from the downward API, or a driver Pod without the spark-app-selector label the runtime selects it by.",
		Why:     "The runtime then probes the wrong ports or binds another Service; without restartPolicy: Always it is an ordinary init container that never exits, so the driver never starts; without the downward-API env it cannot guard its patches or withdraw; without the label the bound Service selects nothing.",
		Fix:     "Run sparkui-fn in transform mode again after changing spark.properties or the Pod: it rewrites the sidecar from the application.",
	},
	"SUI010": {
		Name:    "TLSPort",
		Catches: "TLS is on for the UI (spark.ssl.ui.enabled, inherited from spark.ssl.enabled) but the UI Service port is not named https, or declares appProtocol: http.",
		Why:     "With TLS the plain-HTTP port only redirects to the HTTPS one; clients, Ingress controllers and service meshes that go by the port name or appProtocol speak plain HTTP to a TLS listener.",
		Fix:     "Name the port https and drop appProtocol: http (or set it to https); sparkui-fn does.",
	},
	"SUI011": {
		Name:    "HostNetworkPorts",
		Catches: "A driver Pod with hostNetwork: true whose containers declare ports.",
		Why:     "Under hostNetwork every declared containerPort is a hostPort: the scheduler will not put two drivers declaring the same one on one node.",
		Fix:     "Remove the declared ports (Spark binds them all the same) with a pod template or a patch; sparkui-fn drops the UI's.",
	},
	"SUI012": {
		Name:    "ExposedUIServiceOutlivesDriver",
		Catches: "A NodePort or LoadBalancer UI Service while spark.kubernetes.driver.service.deleteOnTermination=false.",
		Why:     "Spark then leaves its Services behind when the application ends: the UI Service keeps holding a node port or a cloud load balancer for an application that is gone.",
		Fix:     "Keep deleteOnTermination at its default (true), use type ClusterIP, or delete the Services yourself when the application ends.",
	},
	"SUI013": {
		Name:    "DriverOnlyOrClientMode",
		Catches: "Driver-only mode (spark.kubernetes.driver.master=local...) or client mode (spark.submit.deployMode=client).",
		Why:     "Both are supported; the note says which identity the runtime checks: in driver-only mode Spark reports a local-... application id, so the runtime matches the UI by the Pod name.",
		Fix:     "Nothing to fix: the finding is information.",
	},
	"SUI014": {
		Name:    "FunctionConfig",
		Catches: "An unknown field or key, or a bad value, in the functionConfig (typed SparkUIService or ConfigMap).",
		Why:     "The function cannot know what was meant, so it changes nothing rather than guess: a typo such as serviceTyp would otherwise fall back to the default silently.",
		Fix:     "Correct the named field (see docs/configuration.md).",
	},
	"SUI015": {
		Name:    "SparkProperties",
		Catches: "A driver spark.properties that cannot be parsed, or a UI setting (spark.ui.port, spark.port.maxRetries, spark.ssl.ui.port, the TLS and UI switches) that is not a valid value.",
		Why:     "Spark fails at start on it, and sparkui cannot know which port the UI will bind (it assumes Spark's default for the rest).",
		Fix:     "Correct the named key in the ConfigMap, or in spec.sparkConf.",
	},
	"SUI016": {
		Name:    "NoServiceAccount",
		Catches: "A driver Pod that names no serviceAccountName.",
		Why:     "The driver runs as the namespace's default ServiceAccount, which then receives the runtime's grant: every Pod of the namespace that names no ServiceAccount gets it too.",
		Fix:     "Set spark.kubernetes.authenticate.driver.serviceAccountName to a ServiceAccount of the driver's own.",
	},
	"SUI017": {
		Name:    "OwnPreStopHook",
		Catches: "A driver container whose preStop hook is not sparkui's withdrawal hook.",
		Why:     "sparkui-fn keeps the user's hook and installs none of its own: the UI Service is then withdrawn only when the runtime sees the UI go away, after the driver got SIGTERM, so requests can reach a stopping UI.",
		Fix:     "Chain the hooks: run /opt/sparkui/sparkui-runtime withdraw --socket=/opt/sparkui/runtime.sock --timeout=10s first in your own hook.",
	},
	"SUI018": {
		Name:    "MissingSparkConf",
		Catches: "A driver Pod that mounts a spark.properties ConfigMap (volume spark-conf-volume-driver) the input does not hold.",
		Why:     "The UI port, retries and TLS then come from spec.sparkConf or Spark's defaults, which may not be what the driver reads: the UI Service and the runtime may target the wrong port.",
		Fix:     "Include the ConfigMap in the input (for instance in the same kustomization), or set spec.sparkConf to the driver's UI settings.",
	},
	"SUI019": {
		Name:    "DuplicateObject",
		Catches: "Two objects of the same kind, namespace and name in one input (core v1 and RBAC kinds), for instance a kpt package holding a rendered copy of itself.",
		Why:     "Applied, the later silently replaces the earlier; sparkui cannot tell which one is meant, so its rewrite and its other findings may be about the copy that will not exist.",
		Fix:     "Keep one copy: remove the duplicate file, or keep rendered output out of the package (.krmignore).",
	},
	"SUI020": {
		Name:    "DuplicateKey",
		Catches: "A mapping that defines the same key twice in one object, such as kind: Pod then kind: Service, or a port's port: 80 then port: 0.",
		Why:     "YAML parsers disagree on such a mapping: kubectl refuses the object (mapping key already defined), while kyaml-based tools keep both keys and read the first. sparkui cannot know which value is meant, so it changes nothing.",
		Fix:     "Keep one of the two keys (the field path names the second).",
	},
}
