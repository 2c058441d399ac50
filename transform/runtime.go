package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// fieldEnv is an env var from the downward API. fieldRef carries apiVersion v1, the value the
// API server defaults it to: ObjectFieldSelector is an atomic struct in server-side apply, so
// a fieldRef applied without it differs from the live one, and a second server-side applier
// of the same manifests (without --force-conflicts) then conflicts with the first on it
// (seen in runtime/blackbox).
func fieldEnv(name, path string) *yaml.Node {
	return yamlx.NewMap("name", name, "valueFrom", yamlx.NewMap("fieldRef", yamlx.NewMap("apiVersion", "v1", "fieldPath", path)))
}

// RuntimeContainer is the native sidecar: an init container with restartPolicy Always starts
// before the driver and is stopped after it, so it can withdraw the Service last.
func RuntimeContainer(a *app.App, o Options) *yaml.Node {
	cfg := a.RuntimeConfig(o.ExternalURI)
	o.RuntimeAuth.Apply(&cfg)
	cfg.NoEvents = o.NoEvents
	var args []any
	for _, s := range cfg.Args() {
		args = append(args, s)
	}
	env := yamlx.NewSeq(
		fieldEnv(sidecar.EnvPodName, "metadata.name"),
		fieldEnv(sidecar.EnvPodNamespace, "metadata.namespace"),
		fieldEnv(sidecar.EnvPodUID, "metadata.uid"),
	)
	if cfg.ExternalURI == string(sidecar.ExternalURINodePort) {
		env.Content = append(env.Content, fieldEnv(sidecar.EnvHostIP, "status.hostIP"))
	}
	for _, e := range a.RuntimeEnv() {
		env.Content = append(env.Content, fieldEnv(e[0], e[1]))
	}
	// After the downward-API entries, so that an output without a History Server keeps its
	// env byte for byte.
	for _, e := range o.History.Env() {
		env.Content = append(env.Content, yamlx.NewMap("name", e[0], "value", e[1]))
	}
	return yamlx.NewMap(
		"name", sidecar.ContainerName,
		"image", o.RuntimeImage,
		"imagePullPolicy", "IfNotPresent",
		"restartPolicy", "Always",
		"startupProbe", startupProbe(),
		"args", yamlx.NewSeq(args...),
		"env", env,
		"resources", yamlx.NewMap(
			"requests", yamlx.NewMap("cpu", "10m", "memory", "32Mi"),
			"limits", yamlx.NewMap("cpu", "100m", "memory", "64Mi"),
		),
		"securityContext", yamlx.NewMap(
			"runAsNonRoot", true,
			"runAsUser", sidecar.User,
			"runAsGroup", sidecar.User,
			"readOnlyRootFilesystem", true,
			"allowPrivilegeEscalation", false,
			"capabilities", yamlx.NewMap("drop", []string{"ALL"}),
			"seccompProfile", yamlx.NewMap("type", "RuntimeDefault"),
		),
		"terminationMessagePolicy", "FallbackToLogsOnError",
		"volumeMounts", runtimeMounts(o.RuntimeAuth),
	)
}

// startupProbe makes the API server refuse a driver Pod whose runtime lost restartPolicy:
// Always on the way (sidecar.StartupProbe).
func startupProbe() *yaml.Node {
	p := sidecar.StartupProbe
	var cmd []any
	for _, s := range p.Command {
		cmd = append(cmd, s)
	}
	return yamlx.NewMap(
		"exec", yamlx.NewMap("command", yamlx.NewSeq(cmd...)),
		"periodSeconds", p.PeriodSeconds,
		"timeoutSeconds", p.TimeoutSeconds,
		"failureThreshold", p.FailureThreshold,
	)
}

func runtimeMounts(auth sidecar.Auth) *yaml.Node {
	mounts := yamlx.NewSeq(yamlx.NewMap("name", sidecar.VolumeName, "mountPath", sidecar.MountPath))
	if auth.Kind != "" {
		mounts.Content = append(mounts.Content, authMount())
	}
	return mounts
}

func authMount() *yaml.Node {
	return yamlx.NewMap("name", sidecar.AuthVolumeName, "mountPath", sidecar.AuthMountPath, "readOnly", true)
}

// authVolume projects the one Secret key the runtime needs to a fixed file name.
func authVolume(auth sidecar.Auth) *yaml.Node {
	file := sidecar.AuthBearerFileName
	if auth.Kind == sidecar.AuthHeader {
		file = sidecar.AuthHeaderFileName
	}
	return yamlx.NewMap("name", sidecar.AuthVolumeName, "secret", yamlx.NewMap(
		"secretName", auth.Secret,
		"items", yamlx.NewSeq(yamlx.NewMap("key", auth.Key, "path", file)),
	))
}

func runtimeVolume() *yaml.Node {
	return yamlx.NewMap("name", sidecar.VolumeName, "emptyDir", yamlx.NewMap("sizeLimit", "64Mi"))
}

func driverMount() *yaml.Node {
	return yamlx.NewMap("name", sidecar.VolumeName, "mountPath", sidecar.MountPath, "readOnly", true)
}

func preStop() *yaml.Node {
	var cmd []any
	for _, s := range sidecar.PreStopCommand() {
		cmd = append(cmd, s)
	}
	return yamlx.NewMap("exec", yamlx.NewMap("command", yamlx.NewSeq(cmd...)))
}

// named finds the element of a list of named maps (containers, volumes, mounts).
func named(list *yaml.Node, name string) (int, *yaml.Node) {
	for i, e := range yamlx.Items(list) {
		if yamlx.GetStr(e, "name") == name {
			return i, e
		}
	}
	return -1, nil
}

// upsertIn puts want in the sequence list in place of the element with its name, unless
// equal; it reports whether the list changed.
func upsertIn(list, want *yaml.Node) bool {
	i, cur := named(list, yamlx.GetStr(want, "name"))
	switch {
	case cur == nil:
		list.Content = append(list.Content, want)
	case !yamlx.Equal(cur, want):
		list.Content[i] = want
	default:
		return false
	}
	return true
}

// preparePlan is what makes c writable (the places the additions go: a kubeflow driver
// template, an Apache podTemplateSpec, the driver container an operator's template lacks) and
// the pinned name of an Apache driver container (PinConf), written in that order so that a
// second run finds the key set and changes nothing. An error is a field of the wrong shape on
// the way: nothing is added to that application.
func preparePlan(c *app.Carrier) (Plan, []ConfOp, error) {
	// Look first, create after: a field of the wrong shape found half-way must not leave
	// the object with empty slots created before it.
	if err := c.Writable(); err != nil {
		return nil, nil, err
	}
	slots := c.PreparedSlots()
	p := make(Plan, 0, len(slots))
	for _, s := range slots {
		p = append(p, Op{Kind: OpEnsure, Slot: s})
	}
	pin, err := PinConf(c, true)
	return p, pin, err
}

// InjectionPlan writes the runtime into the slots the carrier says the operator or controller
// carries into the driver Pod (app.Carrier.Ensure; preparePlan makes them), and the
// identity label on the driver's pod template, which the runtime's bind selector and
// SUI009 rely on. A slot that cannot be made stops the plan there.
func InjectionPlan(a *app.App, o Options) Plan {
	c := a.Carrier
	// Switching kubeflow injections on sparkui's own output: the other route's copies go.
	p := OtherInjectionPlan(c)
	label := Op{Kind: OpSet, Slot: app.SlotPodLabels, Key: a.IdentityKey, Value: yamlx.NewStr(a.IdentityValue)}
	if c.SparkOwnsIdentityLabel() {
		// The runtime's selector is spark-app-selector=<app id>,spark-role=driver; a Pod
		// Spark did not make (client mode) may lack the first label, and the Service would
		// select nothing. Spark's own value stays.
		label.When = Absent
	}
	p = append(p, label,
		Op{Kind: OpUpsert, Slot: app.SlotInitContainers, Value: RuntimeContainer(a, o)},
		Op{Kind: OpUpsert, Slot: app.SlotVolumes, Value: runtimeVolume()})
	if o.RuntimeAuth.Kind != "" {
		p = append(p, Op{Kind: OpUpsert, Slot: app.SlotVolumes, Value: authVolume(o.RuntimeAuth)})
	} else {
		p = append(p, removeNamed(c, app.SlotVolumes, sidecar.AuthVolumeName)...)
	}
	drv := slotPath(c, app.SlotDriverContainer)
	if c.OperatorOwnsLifecycle() {
		// The operator replaces the container's whole lifecycle (kubeflow/spark-operator
		// internal/controller/sparkconnect/reconciler.go mutateServerPod): a preStop hook
		// would be lost, and the mount serves only that hook. The runtime withdraws on
		// SIGTERM, which the native sidecar gets after the driver container has exited.
		return append(p, driverRemovals(drv, sidecar.VolumeName, sidecar.AuthVolumeName)...)
	}
	// On the kubeflow webhook injection drv is spec.driver: the webhook adds a spec.volumes entry
	// to the Pod only when driver.volumeMounts mounts it, and driver.lifecycle becomes the
	// Spark container's lifecycle (kubeflow/spark-operator
	// internal/webhook/sparkpod_defaulter.go addVolumes, addPodLifeCycleConfig). So the
	// credential's volume, which only the runtime reads, is mounted into the driver
	// container there too, or the webhook drops it and the Pod is refused for the runtime's
	// mount of a volume that does not exist. On every other route the driver never mounts it.
	p = append(p, Op{Kind: OpUpsert, Slot: app.SlotDriverContainer, Field: "volumeMounts", Value: driverMount()})
	if o.RuntimeAuth.Kind != "" && c.ViaWebhook() {
		p = append(p, Op{Kind: OpUpsert, Slot: app.SlotDriverContainer, Field: "volumeMounts", Value: authMount()})
	} else if drv != "" {
		p = append(p, removeIn(fieldpath.Key(drv, "volumeMounts"), sidecar.AuthVolumeName)...)
	}
	// The withdraw hook, unless the driver has a preStop of its own (SUI017 reports that: the
	// runtime then withdraws only once it sees the UI go away, after SIGTERM).
	return append(p, Op{Kind: OpSet, Slot: app.SlotDriverContainer, Field: "lifecycle", Key: "preStop", Value: preStop(), When: OurPreStop})
}

// RemovalPlan undoes InjectionPlan, for an application whose UI was switched off: the other injection's entries (OtherInjectionPlan),
// then this one's runtime container and volumes, the identity label where sparkui set it and
// the driver's mount and preStop. Only what exists is looked at, nothing is created.
func RemovalPlan(a *app.App) Plan {
	c := a.Carrier
	ours := []string{sidecar.ContainerName, sidecar.VolumeName, sidecar.AuthVolumeName}
	p := OtherInjectionPlan(c)
	p = append(p, removeNamed(c, app.SlotInitContainers, ours...)...)
	p = append(p, removeNamed(c, app.SlotVolumes, ours...)...)
	if !c.SparkOwnsIdentityLabel() {
		p = append(p, removeIf(slotPath(c, app.SlotPodLabels), a.IdentityKey, nil)...)
	}
	return append(p, driverRemovals(slotPath(c, app.SlotDriverContainer), sidecar.VolumeName, sidecar.AuthVolumeName)...)
}
