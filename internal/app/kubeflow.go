package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// The kubeflow spark-operator (github.com/kubeflow/spark-operator). Sources are named as in
// docs/operators.md; they were read at commit 38082f33 (after v2.5.2).

// KindKubeflow is a sparkoperator.k8s.io/v1beta2 SparkApplication or
// ScheduledSparkApplication.
const KindKubeflow CarrierKind = "kubeflow"

const kubeflowGroup = "sparkoperator.k8s.io"

// The kubeflow adapters. Spark's spark-app-selector is new every run (spark-<uuid>): the
// runtime reads it from the driver Pod. kubeflow always passes
// spark.kubernetes.driver.podTemplateContainerName=spark-kubernetes-driver
// (submission.go driverPodTemplateOption). Its driver.serviceAccount is where the driver's
// ServiceAccount belongs: its validating webhook at HEAD refuses the conf key.
var (
	kubeflowAdapter = &Adapter{kind: KindKubeflow, group: kubeflowGroup, versions: []string{"v1beta2"}, objectKind: "SparkApplication", resource: "sparkapplications",
		base: []string{"spec"}, podSpec: []string{"driver", "template", "spec"}, caps: kubeflowCaps,
		runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID, saField: []string{"driver", "serviceAccount"},
		operatorServices: kubeflowUIService, operatorUI: kubeflowOperatorUI, webhookSlot: (*Carrier).webhookSlot, schemaNeed: kubeflowSchemaNeed,
		fields: kubeflowFields, notes: kubeflowNotes, admission: &Admission{Name: "kubeflow", Spec: "object.spec",
			PodSpec: "object.spec.driver.template.spec", PodRequired: "object.spec.driver", PodOpen: "object.spec.driver.template"},
		onUpdate: kubeflowUpdate,
		detect:   kubeflow}
	// A ScheduledSparkApplication's spec.template is the SparkApplicationSpec every run is
	// created from (scheduledsparkapplication/controller.go createSparkApplication copies it
	// verbatim); its runs have names not known at build time, so no operator Service is.
	scheduledAdapter = &Adapter{kind: KindKubeflow, group: kubeflowGroup, versions: []string{"v1beta2"}, objectKind: "ScheduledSparkApplication", resource: "scheduledsparkapplications",
		base: []string{"spec", "template"}, podSpec: []string{"driver", "template", "spec"}, caps: kubeflowCaps,
		runLabel: names.LabelAppSelector, runEnv: sidecar.EnvAppID, saField: []string{"driver", "serviceAccount"},
		operatorUI: kubeflowOperatorUI, webhookSlot: (*Carrier).webhookSlot, schemaNeed: kubeflowSchemaNeed,
		fields: kubeflowFields, notes: kubeflowNotes, admission: &Admission{Name: "kubeflow-scheduled", Spec: "object.spec.template", Guard: "!has(object.spec.template) || ",
			PodSpec: "object.spec.template.driver.template.spec", PodRequired: "object.spec.template.driver", PodOpen: "object.spec.template.driver.template",
			// The CRD has no default, and an unset policy is not Allow (detectKubeflow).
			Overlap: &AdmissionOverlap{Field: "object.spec.concurrencyPolicy", Overlaps: "Allow"}},
		onUpdate: scheduledUpdate,
		detect:   kubeflow}

	kubeflowCaps = CapOperatorContainer | CapSparkSubmitsFromConf | CapCustomResource
	kubeflow     = func(c *Carrier, opts CarrierOptions) (bool, error) { return true, c.detectKubeflow(opts) }
	// kubeflowFields: the operator's driverIngressOptions (v2.x) make a Service and an Ingress
	// per entry, aimed at its servicePort (internal/controller/sparkapplication/web_ui.go);
	// its webhook puts the driver on the host network when driver.hostNetwork is true.
	kubeflowFields = map[string][]string{FieldIngressOptions: {"driverIngressOptions"}, FieldHostNetwork: {"driver", "hostNetwork"}}
	kubeflowNotes  = map[string]string{
		"SUI034": " is overridden by the operator's own template file (always since v2.4, and whenever spec.driver.template is set): move its content into spec.driver.template",
	}
	// kubeflowUIService: a SparkApplication's own UI Service (names.KubeflowUIService).
	kubeflowUIService = func(_ *yaml.RNode, name string) map[string]string {
		return map[string]string{names.KubeflowUIService(name): "the kubeflow spark-operator's UI Service of SparkApplication " + name +
			" (" + names.KubeflowUIServicePattern + ")"}
	}
)

// kubeflowOperatorUI: the operator creates a UI Service per run, aimed at the declared port
// (web_ui.go getWebUITargetPort), unless switched off operator-wide.
func kubeflowOperatorUI(c *Carrier, _, ours string) []string {
	theirs := c.Name + "-ui-svc"
	if c.ObjectKind == "ScheduledSparkApplication" {
		theirs = "<run>-ui-svc for every run <" + c.Name + "-timestamp>"
	}
	return []string{"the kubeflow operator also creates " + theirs + ", which targets the declared spark.ui.port (else 4040), not the port the UI bound: use " + ours +
		", or switch the operator's off operator-wide (--enable-ui-service=false, Helm controller.uiService.enable=false)"}
}

// The minimum versions per injection, from github.com/kubeflow/spark-operator (read at its tags):
//   - charts/spark-operator-chart/crds/sparkoperator.k8s.io_{,scheduled}sparkapplications.yaml
//     first have restartPolicy under spec.driver.initContainers.items in chart 1.3.2
//     (appVersion v1beta2-1.5.0-3.5.0); charts 1.0.2 … 1.3.1 and the 1.2.x line up to 1.2.15
//     do not. They all have startupProbe there, which is why the runtime's startupProbe makes
//     a pruned runtime a refused Pod.
//   - spec.driver.template first appears in the CRDs of v2.1.0 (chart and operator).
//   - the operator decodes SparkApplications into k8s.io/api's Container: go.mod replaces
//     k8s.io/api with v0.25.3 in v1beta2-1.3.8 … v1beta2-1.4.2 (and older versions use
//     v0.19.6 or v0.16.6), which has no Container.RestartPolicy (added in v0.28); from
//     v1beta2-1.4.3-3.5.0 it is v0.29.3.
const (
	minWebhookRoute  = "chart 1.3.2 (operator image v1beta2-1.5.0-3.5.0) or later; an operator older than v1beta2-1.4.3-3.5.0 drops restartPolicy itself even with a newer CRD"
	minTemplateRoute = "chart and operator 2.1.0 or later"
)

// kubeflowSchemaNeed is the field of the CRD's schema the injection in use needs kept: the
// runtime's restartPolicy under driver.initContainers (webhook) or driver.template.
func kubeflowSchemaNeed(c *Carrier, runtime int) *SchemaNeed {
	base := strings.Join(c.base, ".")
	if c.ViaWebhook() {
		return &SchemaNeed{Path: cat(c.base, "driver", "initContainers", "[]", "restartPolicy"),
			Field: fmt.Sprintf("%s.driver.initContainers[%d].restartPolicy", base, runtime), Min: minWebhookRoute,
			Effect: "the API server drops it on create, the operator's webhook adds the runtime to the driver Pod as an ordinary init container, " +
				"and the API server refuses that Pod (an init container without restartPolicy: Always may not have the runtime's startupProbe): the application fails at submission"}
	}
	return &SchemaNeed{Path: cat(c.base, "driver", "template"), Field: base + ".driver.template", Min: minTemplateRoute,
		Effect: "the API server drops the whole template on create: the runtime never reaches the driver Pod and the UI Service is never bound, with no error anywhere " +
			"(an operator older than 2.1.0 does not read driver.template either)"}
}

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
		if p == "Allow" {
			c.Overlap = &CarrierNote{Field: "spec.concurrencyPolicy", Msg: "concurrencyPolicy is Allow" + overlapAllow}
		}
	}
	// Constant strings: detection runs twice per function run on every application.
	c.MainClassPath, c.SparkVersionPath = "spec.mainClass", "spec.sparkVersion"
	if c.ObjectKind == "ScheduledSparkApplication" {
		c.MainClassPath, c.SparkVersionPath = "spec.template.mainClass", "spec.template.sparkVersion"
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
	hostNet, err := c.readBool(c.FieldPath(FieldHostNetwork)...)
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
	if !c.HasInjections() || c.ViaWebhook() {
		return false
	}
	major, _, _ := strings.Cut(strings.TrimPrefix(c.SparkVersion, "v"), ".")
	n, err := strconv.Atoi(major)
	return err == nil && n < 3
}

// OtherInjection is a kubeflow carrier read with the injection not in use (its Lookup finds the other
// injection's slots), nil for every other carrier.
func (c *Carrier) OtherInjection() *Carrier {
	if !c.HasInjections() {
		return nil
	}
	o := *c
	o.Injection = InjectWebhook
	if c.Injection == InjectWebhook {
		o.Injection = InjectTemplate
	}
	return &o
}

// kubeflowUpdate: the operator's update filter (v2.5.2, internal/controller/sparkapplication/
// event_filter.go EventFilter.Update) compares the old and new spec with suspend and
// timeToLiveSeconds set equal; any other difference sets the application's state to
// Invalidating, whatever state it was in (Completed and Failed included), and
// reconcileInvalidatingSparkApplication (controller.go) deletes the driver and its resources
// and moves it to PendingRerun: it is submitted again. (Its alpha PartialRestart feature
// gate, off by default, skips only changes of fields its webhook patches into executor
// Pods.)
func kubeflowUpdate(_ *Carrier, changed []string) Update {
	if onlyUnder(changed, "spec.suspend", "spec.timeToLiveSeconds") {
		return Update{Effect: UpdateInPlace, Says: "the kubeflow operator takes a change of suspend or timeToLiveSeconds without invalidating the run (event_filter.go Update)"}
	}
	return Update{Effect: UpdateRestarts, Says: "the kubeflow operator invalidates the application on any spec change but suspend and timeToLiveSeconds: it deletes the running driver and submits the application again, and a Completed or Failed application still present runs again (event_filter.go Update, controller.go reconcileInvalidatingSparkApplication)"}
}

// scheduledUpdate: the ScheduledSparkApplication controller (v2.5.2,
// internal/controller/scheduledsparkapplication/controller.go) watches its object with
// a filter that passes every update (event_filter.go Update) and, when a run is due, creates
// a SparkApplication whose spec is spec.template copied (createSparkApplication); the runs
// already created are SparkApplications of their own and keep their spec.
func scheduledUpdate(_ *Carrier, _ []string) Update {
	return Update{Effect: UpdateNextRun, Says: "the ScheduledSparkApplication controller copies spec.template into each run's SparkApplication when the run starts (createSparkApplication): the running one is left alone"}
}
