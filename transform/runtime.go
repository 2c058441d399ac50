package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
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
	return yamlx.NewMap(
		"name", sidecar.ContainerName,
		"image", o.RuntimeImage,
		"imagePullPolicy", "IfNotPresent",
		"restartPolicy", "Always",
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

func runtimeMounts(auth sidecar.Auth) *yaml.Node {
	mounts := yamlx.NewSeq(yamlx.NewMap("name", sidecar.VolumeName, "mountPath", sidecar.MountPath))
	if auth.Kind != "" {
		mounts.Content = append(mounts.Content, yamlx.NewMap("name", sidecar.AuthVolumeName, "mountPath", sidecar.AuthMountPath, "readOnly", true))
	}
	return mounts
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

// upsertNamed puts want in list in place of the element with its name, unless equal.
func upsertNamed(parent *yaml.Node, key string, want *yaml.Node) {
	list := yamlx.EnsureSeq(parent, key)
	i, cur := named(list, yamlx.GetStr(want, "name"))
	switch {
	case cur == nil:
		list.Content = append(list.Content, want)
	case !yamlx.Equal(cur, want):
		list.Content[i] = want
	}
}

// InjectRuntime adds the runtime sidecar, its shared volume, and the driver container's mount
// and preStop hook. A preStop hook the user already has is left alone (validation warns: the
// runtime then withdraws only once it sees the UI go away, after SIGTERM).
func InjectRuntime(a *app.App, o Options) {
	c := a.DriverContainerNode()
	if c == nil {
		return
	}
	spec := yamlx.Get(a.Pod.YNode(), "spec")
	// The runtime's selector is spark-app-selector=<app id>,spark-role=driver; a Pod Spark did
	// not make (client mode) may lack the first label, and the Service would select nothing.
	labels := yamlx.Ensure(yamlx.Ensure(a.Pod.YNode(), "metadata"), "labels")
	if yamlx.Get(labels, names.LabelAppSelector) == nil {
		yamlx.Set(labels, names.LabelAppSelector, yamlx.NewStr(a.AppID))
	}
	upsertNamed(spec, "initContainers", RuntimeContainer(a, o))
	upsertNamed(spec, "volumes", runtimeVolume())
	if o.RuntimeAuth.Kind != "" {
		upsertNamed(spec, "volumes", authVolume(o.RuntimeAuth))
	} else {
		removeByName(spec, "volumes", sidecar.AuthVolumeName)
	}
	upsertNamed(c, "volumeMounts", driverMount())
	lc := yamlx.Ensure(c, "lifecycle")
	if h := yamlx.Get(lc, "preStop"); h == nil || app.IsOurPreStop(h) {
		yamlx.SetIfChanged(lc, "preStop", preStop())
	}
}

// RemoveRuntime undoes InjectRuntime, for an application whose UI was switched off.
func RemoveRuntime(a *app.App) {
	spec := yamlx.Get(a.Pod.YNode(), "spec")
	removeNamed(spec, "initContainers")
	removeNamed(spec, "volumes")
	if c := a.DriverContainerNode(); c != nil {
		removeNamed(c, "volumeMounts")
		if lc := yamlx.Get(c, "lifecycle"); lc != nil {
			if app.IsOurPreStop(yamlx.Get(lc, "preStop")) {
				yamlx.Delete(lc, "preStop")
			}
			if len(lc.Content) == 0 {
				yamlx.Delete(c, "lifecycle")
			}
		}
	}
}

// removeByName drops the element called name from a named list (and the list when empty).
func removeByName(parent *yaml.Node, key, name string) {
	list := yamlx.Get(parent, key)
	if yamlx.Filter(list, func(e *yaml.Node) bool { return yamlx.GetStr(e, "name") != name }) && len(list.Content) == 0 {
		yamlx.Delete(parent, key)
	}
}

// removeNamed drops sparkui's entry (container, volume or mount) from a named list.
func removeNamed(parent *yaml.Node, key string) {
	list := yamlx.Get(parent, key)
	mine := func(e *yaml.Node) bool {
		n := yamlx.GetStr(e, "name")
		return n == sidecar.ContainerName || n == sidecar.VolumeName || n == sidecar.AuthVolumeName
	}
	if yamlx.Filter(list, func(e *yaml.Node) bool { return !mine(e) }) && len(list.Content) == 0 {
		yamlx.Delete(parent, key)
	}
}
