package app

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/sparkconf"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// What the API server rejects and what an application's runtime must be told: transform
// writes it, validate checks the input against it, so both read it from here.

// ZeroContainerPort reports whether a containerPort entry is the integer 0 (what
// spark.ui.port=0 writes; the API server rejects it as "Required value"). A containerPort that
// is missing or not an integer is no zero: detection refuses the carrier (Carrier.checkPorts),
// so transform never drops the user's port for it.
func ZeroContainerPort(p *yaml.Node) bool {
	n, ok := yamlx.Port(yamlx.Get(p, "containerPort"))
	return ok && n == 0
}

// ZeroServicePort reports whether a Service port entry has port 0, the integer: what
// spark-submit writes for spark.ui.port=0. A port that is missing or not an integer is no 0
// (UnreadableServicePort): never dropped for one.
func ZeroServicePort(p *yaml.Node) bool {
	n, ok := yamlx.Port(yamlx.Get(p, "port"))
	return ok && n == 0
}

// UnreadableServicePort reports a Service port entry whose port is missing (v nil) or not an
// integer (v is the value).
func UnreadableServicePort(p *yaml.Node) (v *yaml.Node, bad bool) {
	if p == nil || p.Kind != yaml.MappingNode {
		return nil, false
	}
	v = yamlx.Get(p, "port")
	if v == nil || (v.Kind == yaml.ScalarNode && v.ShortTag() == yaml.NodeTagNull) {
		return nil, true
	}
	_, ok := yamlx.Port(v)
	return v, !ok
}

// ZeroTargetPort reports whether a Service port entry has an explicit targetPort 0.
func ZeroTargetPort(p *yaml.Node) bool {
	t := yamlx.Get(p, "targetPort")
	if t == nil {
		return false
	}
	n, ok := yamlx.Int(t)
	return ok && n == 0
}

// RuntimeConfig is what the runtime must be told about a; externalURI is the functionConfig's
// service.externalURI.
func (a *App) RuntimeConfig(externalURI sidecar.ExternalURIMode) sidecar.Config {
	uri := ""
	if sidecar.ResolvesURI(externalURI) {
		uri = string(externalURI)
	}
	role := a.BinderName
	if role == sidecar.DefaultRole(a.UIServiceName) {
		role = "" // the runtime's default
	}
	var guard, selector, appID = "", "", a.AppID
	if !a.Carrier.SparkOwnsIdentityLabel() {
		// A carrier's UI Service is the pipeline's, shared by the carrier's successive runs,
		// and carries no app id: the runtime guards on the identity label, leaves the
		// Service's owners alone (deleting a finished run's Pod must not collect it) and binds
		// a selector naming the run's own label, whose value it has from the downward API
		// (RuntimeEnv) through the kubelet's $(VAR) expansion of the args.
		guard = a.IdentityKey + "=" + a.IdentityValue
		if key, env := a.RunLabel(); key != "" {
			selector = key + "=$(" + env + "),"
		}
		selector += guard + "," + names.LabelSparkRole + "=" + a.Carrier.DriverRole()
	}
	return sidecar.Config{
		GuardLabel:       guard,
		PodSelector:      selector,
		NoOwnerReference: !a.Carrier.SparkOwnsIdentityLabel(),
		Role:             role,
		ExternalURI:      uri,
		Service:          a.UIServiceName,
		AppID:            appID,
		UIPort:           a.Settings.UIPort,
		MaxRetries:       a.Settings.MaxRetries,
		TLS:              a.Settings.TLS,
		SSLPort:          a.Settings.SSLPort,
		HostNetwork:      a.HostNetwork,
		SkipPorts:        sidecar.FormatPorts(a.Settings.SkipPorts(a.ConnectServer || a.Carrier.MainClass == ConnectServerClass)),
		UIFilters:        a.Props[sparkconf.KeyUIFilters],
	}
}

// RunLabel is the label of a carrier's driver Pod that only this run's Pod carries, and the
// env var the runtime reads its value from: Spark's spark-app-selector for an operator
// (kubeflow: spark-<uuid>, new every run; Apache: <name>-<attempt>, new every attempt —
// research in docs/operators.md), the Job controller's batch.kubernetes.io/controller-uid for
// a Job or a CronJob's runs, the StatefulSet controller's statefulset.kubernetes.io/pod-name,
// a Deployment's pod-template-hash (one per rollout: SUI035/SUI036 keep it to one driver Pod).
// "" for a spark-submit Pod, whose app id is known at build time.
func (a *App) RunLabel() (key, env string) {
	if a.Carrier == nil || a.Carrier.profile == nil {
		return "", ""
	}
	return a.Carrier.profile.runLabel, a.Carrier.profile.runEnv
}

// RuntimeEnv is the downward-API env the runtime needs beyond POD_NAME, POD_NAMESPACE and
// POD_UID: env name to fieldPath, in a fixed order.
func (a *App) RuntimeEnv() [][2]string {
	if key, env := a.RunLabel(); key != "" {
		return [][2]string{{env, "metadata.labels['" + key + "']"}}
	}
	return nil
}

// IsOurPreStop reports whether a preStop handler runs the runtime's withdraw command.
func IsOurPreStop(h *yaml.Node) bool {
	var cmd []string
	for _, c := range yamlx.Items(yamlx.Get(h, "exec", "command")) {
		cmd = append(cmd, yamlx.Str(c))
	}
	return sidecar.IsWithdrawCommand(cmd)
}

// RuntimeOwned is a field of a UI Service in the manifests that the runtime writes on the live
// Service. Declared, every re-apply of the manifests resets it and undoes the runtime's bind,
// so transform removes it and validation reports it (SUI020). The selector is one too, but
// has its own rule (SUI004) and is removed with the spec.
type RuntimeOwned struct {
	Path string // field path
	What string // the field in words, for messages
	// Value is the declared value when it is a scalar.
	Value string
	// Parent is the mapping that holds the field under Key (transform removes it from there).
	Parent *yaml.Node
	Key    string
}

// RuntimeOwnedFields lists the runtime's fields svc declares: each port's targetPort,
// metadata.ownerReferences, and the resolved-URI annotation.
func RuntimeOwnedFields(svc *yaml.Node) []RuntimeOwned {
	var out []RuntimeOwned
	for i, p := range yamlx.Items(yamlx.Get(svc, "spec", "ports")) {
		// The spark-connect port's targetPort is sparkui's, not the runtime's (transform's
		// setConnectPort): the runtime patches the first port only.
		if i > 0 && yamlx.GetStr(p, "name") == names.ConnectPortName {
			continue
		}
		if t := yamlx.Get(p, "targetPort"); t != nil {
			out = append(out, RuntimeOwned{Path: "spec.ports[" + strconv.Itoa(i) + "].targetPort", What: "targetPort", Value: yamlx.Str(t), Parent: p, Key: "targetPort"})
		}
	}
	md := yamlx.Get(svc, "metadata")
	if yamlx.Get(md, "ownerReferences") != nil {
		out = append(out, RuntimeOwned{Path: "metadata.ownerReferences", What: "ownerReferences", Parent: md, Key: "ownerReferences"})
	}
	ann := yamlx.Get(md, "annotations")
	if v := yamlx.Get(ann, names.AnnotationResolvedExternalURI); v != nil {
		out = append(out, RuntimeOwned{Path: fieldpath.Key("metadata.annotations", names.AnnotationResolvedExternalURI),
			What: "the " + names.AnnotationResolvedExternalURI + " annotation", Value: yamlx.Str(v), Parent: ann, Key: names.AnnotationResolvedExternalURI})
	}
	return out
}

// FluxCreatesOnly reports whether the UI Service svc carries Flux's create-only apply policy
// (names.AnnotationFluxSSA), with Flux's own case-insensitive match.
func FluxCreatesOnly(svc *yaml.Node) bool {
	v := yamlx.Get(svc, "metadata", "annotations", names.AnnotationFluxSSA)
	return v != nil && v.Kind == yaml.ScalarNode && strings.EqualFold(v.Value, names.FluxSSAIfNotPresent)
}

// WantIPFamilies is a mapping with the ipFamilyPolicy and ipFamilies a carrier's UI Service
// copies from Spark's spark.kubernetes.driver.service.ipFamil* settings (keys absent when
// unset): the driver Service Spark creates gets exactly these (KubernetesDriverConf), and
// neither operator sets IP families on a Service of its own.
func WantIPFamilies(a *App) *yaml.Node {
	m := yamlx.NewMap()
	if a.Carrier == nil {
		return m
	}
	if a.Carrier.IPFamilyPolicy != "" {
		yamlx.Set(m, "ipFamilyPolicy", yamlx.NewStr(a.Carrier.IPFamilyPolicy))
	}
	if len(a.Carrier.IPFamilies) > 0 {
		var fs []any
		for _, f := range a.Carrier.IPFamilies {
			fs = append(fs, f)
		}
		yamlx.Set(m, "ipFamilies", yamlx.NewSeq(fs...))
	}
	return m
}
