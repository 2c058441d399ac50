package app

import (
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// Workloads whose pod template is a Spark driver: client-mode notebooks (StatefulSet),
// Spark Connect servers (Deployment or StatefulSet), driver-only Jobs and CronJobs.
// Kubernetes does not set spark-role=driver; a template that declares it marks the carrier.

// KindWorkload is a pod template whose Pod runs the driver itself.
const KindWorkload CarrierKind = "workload"

// The workload adapters: Kubernetes' own controllers label each run's Pods (runLabel).
var (
	deploymentAdapter = &Adapter{kind: KindWorkload, group: "apps", versions: []string{"v1"}, objectKind: "Deployment", resource: "deployments",
		base: []string{"spec", "template"}, podSpec: []string{"spec"}, caps: CapConfAppID, replicas: []string{"spec", "replicas"},
		runLabel: "pod-template-hash", runEnv: sidecar.EnvRunLabel, detect: workload, onUpdate: rolloutUpdate,
		// The API server defaults strategy.type to RollingUpdate before admission.
		admission: &Admission{Name: "deployment", Family: "workload", Driver: templateIsDriver, PodSpec: "object.spec.template.spec",
			Overlap: &AdmissionOverlap{Field: "object.spec.strategy.type", Overlaps: "RollingUpdate", Defaulted: true}}}
	statefulSetAdapter = &Adapter{kind: KindWorkload, group: "apps", versions: []string{"v1"}, objectKind: "StatefulSet", resource: "statefulsets",
		base: []string{"spec", "template"}, podSpec: []string{"spec"}, caps: CapConfAppID, replicas: []string{"spec", "replicas"},
		runLabel: "statefulset.kubernetes.io/pod-name", runEnv: sidecar.EnvRunLabel, detect: workload, onUpdate: rolloutUpdate,
		admission: &Admission{Name: "statefulset", Family: "workload", Driver: templateIsDriver, PodSpec: "object.spec.template.spec"}}
	jobAdapter = &Adapter{kind: KindWorkload, group: "batch", versions: []string{"v1"}, objectKind: "Job", resource: "jobs",
		base: []string{"spec", "template"}, podSpec: []string{"spec"}, caps: CapConfAppID, replicas: []string{"spec", "parallelism"},
		runLabel: "batch.kubernetes.io/controller-uid", runEnv: sidecar.EnvRunLabel, detect: workload, onUpdate: jobUpdate,
		admission: &Admission{Name: "job", Driver: templateIsDriver, PodSpec: "object.spec.template.spec"}}
	cronJobAdapter = &Adapter{kind: KindWorkload, group: "batch", versions: []string{"v1"}, objectKind: "CronJob", resource: "cronjobs",
		base: []string{"spec", "jobTemplate", "spec", "template"}, podSpec: []string{"spec"}, caps: CapConfAppID,
		replicas: []string{"spec", "jobTemplate", "spec", "parallelism"},
		runLabel: "batch.kubernetes.io/controller-uid", runEnv: sidecar.EnvRunLabel, detect: workload, onUpdate: nextRun("the CronJob controller creates each run's Job from spec.jobTemplate when it is due (pkg/controller/cronjob getJobFromTemplate2): a running Job keeps the template it was made from"),
		// The API server defaults concurrencyPolicy to Allow before admission.
		admission: &Admission{Name: "cronjob", Driver: cronJobTemplateIsDriver, PodSpec: "object.spec.jobTemplate.spec.template.spec",
			Overlap: &AdmissionOverlap{Field: "object.spec.concurrencyPolicy", Overlaps: "Allow", Defaulted: true}}}
	workload = func(c *Carrier, opts CarrierOptions) (bool, error) { return c.detectWorkload(opts) }

	// templateIsDriver and cronJobTemplateIsDriver: the pod template is labelled
	// spark-role=driver, the mark of a driver workload (detectWorkload). A CronJob's
	// jobTemplate.spec is optional in its schema, as a template's metadata and labels are.
	templateIsDriver        = celTemplateIsDriver("object.spec.template")
	cronJobTemplateIsDriver = celTemplateIsDriver("object.spec.jobTemplate.spec.template", "object.spec.jobTemplate.spec")
)

// celTemplateIsDriver: the pod template at template (a CEL path) is labelled as a driver's;
// optional are the paths above it the schema does not require, which CEL must test first.
func celTemplateIsDriver(template string, optional ...string) string {
	labels := template + ".metadata.labels"
	var has []string
	for _, p := range append(append([]string(nil), optional...), template+".metadata", labels) {
		has = append(has, "has("+p+")")
	}
	return strings.Join(has, " && ") + " && '" + names.LabelSparkRole + "' in " + labels + " && " +
		labels + "['" + names.LabelSparkRole + "'] == '" + names.RoleDriver + "'"
}

// overlapAllow is why a concurrencyPolicy Allow lets two drivers share one UI Service (SUI036).
const overlapAllow = ": the next run can start while the last still runs, and both share the UI Service; use Forbid or Replace"

// detectWorkload reads a Deployment, StatefulSet, Job or CronJob whose pod template is
// labelled spark-role=driver. Anything else is not a carrier, whatever its shape.
func (c *Carrier) detectWorkload(opts CarrierOptions) (bool, error) {
	if yamlx.GetStr(c.Object.YNode(), cat(c.base, "metadata", "labels", names.LabelSparkRole)...) != names.RoleDriver {
		return false, nil
	}
	var err error
	if c.ServiceAccount, c.ServiceAccountPath, c.HostNetwork, err = c.readPodSpecFacts(); err != nil {
		return false, err
	}

	if r := c.profile.replicas; r != nil {
		c.ReplicasPath = strings.Join(r, ".")
		if c.Replicas, err = c.readInt(1, r...); err != nil {
			return false, err
		}
	}
	switch c.ObjectKind {
	case "Deployment":
		// RollingUpdate (the default) starts the new driver before the old one stops.
		if c.Strategy, err = c.readScalar("spec", "strategy", "type"); err != nil {
			return false, err
		}
		if c.Strategy == "" {
			c.Strategy = "RollingUpdate"
		}
		if c.Strategy == "RollingUpdate" {
			c.Overlap = &CarrierNote{Field: "spec.strategy.type",
				Msg: "the Deployment updates with RollingUpdate (also the default when unset): the new driver starts before the old one stops and both share the UI Service; use strategy.type: Recreate"}
		}
	case "CronJob":
		if c.ConcurrencyPolicy, err = c.readScalar("spec", "concurrencyPolicy"); err != nil {
			return false, err
		}
		if c.ConcurrencyPolicy == "" {
			c.ConcurrencyPolicy = "Allow" // batch/v1 default
		}
		if c.ConcurrencyPolicy == "Allow" {
			c.Overlap = &CarrierNote{Field: "spec.concurrencyPolicy", Msg: "concurrencyPolicy is Allow (also the CronJob default when unset)" + overlapAllow}
		}
	}

	ctr, ctrPath, err := c.driverContainer(false)
	if err != nil {
		return false, err
	}
	sub, err := c.readSubmitArgs(ctr, ctrPath)
	if err != nil {
		return false, err
	}
	c.MainClass, c.MainClassPath = sub.mainClass, ctrPath

	// The conf, lowest precedence first: the functionConfig's sparkConf (what the image or
	// the notebook code sets, which the manifests cannot show), the properties files Spark
	// loads, the --conf arguments, then the options that name a property (--master,
	// --deploy-mode, --name), and the environment's DEPLOY_MODE and MASTER under all of them.
	// spark-submit's SparkSubmitArguments (3.x and master): --conf fills sparkProperties
	// first and mergeDefaultSparkProperties adds only missing keys, from --properties-file,
	// then from spark-defaults.conf when no --properties-file is given or (4.0+,
	// SPARK-48392) --load-spark-defaults is; loadEnvironmentArguments then takes
	// `deployMode = Option(deployMode).orElse(sparkProperties.get(...)).orElse(env.get(
	// "DEPLOY_MODE"))`, so the option wins over --conf whatever their order.
	for k, v := range opts.SparkConf {
		c.Conf[k] = v
	}
	var files []string
	if sub.propertiesFile == "" || sub.loadDefaults {
		files = append(files, sparkDefaultsFile(ctr))
	}
	if sub.propertiesFile != "" {
		files = append(files, sub.propertiesFile)
	}
	for _, f := range files {
		if err := c.readConfFile(opts, ctr, ctrPath, f); err != nil {
			return false, err
		}
	}
	for k, v := range sub.conf {
		c.Conf[k] = v
	}
	for k, v := range sub.options {
		c.Conf[k] = v
	}
	for env, key := range map[string]string{"DEPLOY_MODE": sparkconf.KeyDeployMode, "MASTER": "spark.master"} {
		if _, set := c.Conf[key]; !set {
			if v := literalEnv(ctr, env); v != "" {
				c.Conf[key] = v
			}
		}
	}
	c.readIPFamilies()
	// The Pod runs the driver itself: client mode unless it says otherwise (then it is a
	// submitter, not a driver, which rules can report).
	c.DeployMode = c.Conf[sparkconf.KeyDeployMode]
	if c.DeployMode == "" {
		// spark-submit's own default (SparkSubmitArguments: deployMode defaults to client),
		// put into the model's conf so the settings (client-mode identity rules, skipped
		// ports) see what Spark will run; the object is not changed.
		c.DeployMode = "client"
		c.Conf[sparkconf.KeyDeployMode] = c.DeployMode
	}
	return true, nil
}

type submitArgs struct {
	conf map[string]string
	// options are the properties named by --master, --deploy-mode and --name, which
	// override --conf.
	options        map[string]string
	mainClass      string
	propertiesFile string
	loadDefaults   bool // --load-spark-defaults (Spark 4.0+)
}

// readSubmitArgs reads spark-submit's options from the driver container's command and args
// (also what start-connect-server.sh and pyspark pass on): --conf/-c k=v, --master,
// --deploy-mode, --name, --class, --properties-file, in both "--opt v" and "--opt=v" forms
// (Spark's SparkSubmitOptionParser accepts both). Tokens are taken one by one: a shell
// command line in one string (sh -c "…") is not split.
func (c *Carrier) readSubmitArgs(ctr *yaml.Node, ctrPath string) (submitArgs, error) {
	out := submitArgs{conf: map[string]string{}, options: map[string]string{}}
	if ctr == nil {
		return out, nil
	}
	var tokens []string
	for _, list := range []string{"command", "args"} {
		s := yamlx.Get(ctr, list)
		if yamlx.IsNull(s) {
			continue
		}
		if s.Kind != yaml.SequenceNode {
			return out, c.shapeErr(ctrPath+"."+list, "is "+yamlx.Shape(s)+", want a list")
		}
		for i, t := range s.Content {
			if t.Kind != yaml.ScalarNode {
				return out, c.shapeErr(indexPath(ctrPath+"."+list, i), "is "+yamlx.Shape(t)+", want a string")
			}
			tokens = append(tokens, t.Value)
		}
	}
	flags := map[string]string{
		"--master": "spark.master", "--deploy-mode": sparkconf.KeyDeployMode, "--name": "spark.app.name",
	}
	for i := 0; i < len(tokens); i++ {
		t := tokens[i]
		if t == HistoryServerClass || path.Base(t) == "start-history-server.sh" {
			out.mainClass = HistoryServerClass
			continue
		}
		opt, val, inline := strings.Cut(t, "=")
		if !strings.HasPrefix(opt, "-") {
			continue
		}
		if t == "--load-spark-defaults" { // a switch: takes no value
			out.loadDefaults = true
			continue
		}
		if !inline {
			if i+1 >= len(tokens) {
				break
			}
			val = tokens[i+1]
		}
		known := true
		switch opt {
		case "--conf", "-c":
			if k, v, ok := strings.Cut(val, "="); ok {
				out.conf[k] = v
			}
		case "--class":
			if out.mainClass == "" {
				out.mainClass = val
			}
		case "--properties-file":
			out.propertiesFile = val
		default:
			if key, ok := flags[opt]; ok {
				out.options[key] = val
			} else {
				known = false
			}
		}
		if known && !inline {
			i++
		}
	}
	return out, nil
}

// sparkDefaultsFile is spark-defaults.conf in the container's $SPARK_CONF_DIR (default
// /opt/spark/conf): Utils.getDefaultPropertiesFile.
func sparkDefaultsFile(ctr *yaml.Node) string {
	dir := defaultSparkConfDir
	if v := literalEnv(ctr, "SPARK_CONF_DIR"); v != "" {
		dir = v
	}
	return path.Join(dir, sparkDefaultsConfKey)
}

// literalEnv is the value the container's env list gives name, "" when unset or not a
// literal (valueFrom is not known at build time); the last entry wins, as in the kubelet.
func literalEnv(ctr *yaml.Node, name string) string {
	v := ""
	for _, e := range yamlx.Items(yamlx.Get(ctr, "env")) {
		if yamlx.GetStr(e, "name") == name {
			v = yamlx.GetStr(e, "value")
		}
	}
	return v
}

// readConfFile reads a properties file Spark loads (java.util.Properties) from an input
// ConfigMap mounted into the driver container, into c.Conf over what is there. A mount of the
// directory (configMap items may rename keys) or of the one file through subPath is
// followed; anything else (a ConfigMap not in the input, a projected volume) leaves the
// conf to the other sources.
func (c *Carrier) readConfFile(opts CarrierOptions, ctr *yaml.Node, ctrPath, file string) error {
	if ctr == nil || opts.ConfigMap == nil || c.ConfError != nil {
		return nil
	}
	file = path.Clean(file)
	mounts := yamlx.Get(ctr, "volumeMounts")
	if !yamlx.IsNull(mounts) && mounts.Kind != yaml.SequenceNode {
		return c.shapeErr(ctrPath+".volumeMounts", "is "+yamlx.Shape(mounts)+", want a list")
	}
	vols, _, err := c.walkSeq(false, append(c.podSpecPath(), "volumes")...)
	if err != nil {
		return err
	}
	for _, m := range yamlx.Items(mounts) {
		mp := path.Clean(yamlx.GetStr(m, "mountPath"))
		var relPath string // the file's path inside the volume
		switch {
		case mp == file && yamlx.GetStr(m, "subPath") != "":
			relPath = yamlx.GetStr(m, "subPath")
		case path.Dir(file) == mp && yamlx.GetStr(m, "subPath") == "":
			relPath = path.Base(file)
		default:
			continue
		}
		for _, v := range yamlx.Items(vols) {
			if yamlx.GetStr(v, "name") != yamlx.GetStr(m, "name") {
				continue
			}
			cmName := yamlx.GetStr(v, "configMap", "name")
			if cmName == "" {
				continue
			}
			key := relPath
			if items := yamlx.Items(yamlx.Get(v, "configMap", "items")); items != nil {
				key = ""
				for _, it := range items {
					if yamlx.GetStr(it, "path") == relPath {
						key = yamlx.GetStr(it, "key")
					}
				}
			}
			cm := opts.ConfigMap(c.Namespace, cmName)
			if cm == nil || key == "" {
				continue
			}
			data := yamlx.Get(cm.YNode(), "data", key)
			if data == nil {
				continue
			}
			c.ConfFile = cmName + "/" + key
			if data.Kind != yaml.ScalarNode {
				c.ConfError = &ConfError{Msg: "ConfigMap " + c.ConfFile + " is not a string"}
				return nil
			}
			props, err := sparkconf.Parse(data.Value)
			if err != nil {
				c.ConfError = &ConfError{Msg: "ConfigMap " + c.ConfFile + ": " + err.Error()}
				return nil
			}
			for k, val := range props {
				c.Conf[k] = val
			}
			return nil
		}
	}
	return nil
}

// rolloutUpdate: a Deployment's or StatefulSet's controller replaces its Pods when the pod
// template changes (k8s.io/kubernetes pkg/controller/deployment, a new ReplicaSet per
// template hash; pkg/controller/statefulset, a new controller revision), so the running
// driver is killed and a new one started; a change outside the template (replicas,
// strategy) is taken in place.
func rolloutUpdate(c *Carrier, changed []string) Update {
	if !onlyOutside(changed, c.basePath()) {
		return Update{Effect: UpdateRestarts, Says: "the pod template changed: the rollout replaces the driver Pod (a StatefulSet with updateStrategy OnDelete only when the Pod is deleted): the running driver, its Spark Connect or notebook sessions, are lost"}
	}
	return Update{Effect: UpdateInPlace, Says: "only fields outside the pod template changed: no Pod is replaced"}
}

// jobUpdate: a Job's pod template is immutable while the Job is not suspended (k8s.io/kubernetes
// pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate, validatePodTemplateUpdate,
// read at v1.37.2), so the API server refuses the apply and a GitOps sync stays failed.
func jobUpdate(c *Carrier, changed []string) Update {
	if !onlyOutside(changed, c.basePath()) {
		return Update{Effect: UpdateRefused, Says: "the API server refuses it: a Job's pod template is immutable (ValidateJobSpecUpdate); with Flux's force or Argo CD's Replace=true the Job, even a completed one, is deleted and created again instead: the driver runs again"}
	}
	return Update{Effect: UpdateInPlace, Says: "only fields outside the pod template changed: the running driver is left alone (the API server's Job validation decides which of those it takes)"}
}

// nextRun is the behaviour of a carrier whose controller makes each run from the object
// when the run starts, as says explains.
func nextRun(says string) func(*Carrier, []string) Update {
	return func(*Carrier, []string) Update { return Update{Effect: UpdateNextRun, Says: says} }
}

// onlyOutside reports that no path in changed is base or under it.
func onlyOutside(changed []string, base string) bool {
	for _, p := range changed {
		if onlyUnder([]string{p}, base) {
			return false
		}
	}
	return true
}
