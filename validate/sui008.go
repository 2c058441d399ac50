package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI008: a UI Service exists but its driver Pod has no runtime to bind it.
var SUI008 = Rule{
	ID:       "SUI008",
	Severity: framework.Error,
	Title:    "a UI Service exists but its driver Pod has no runtime to bind it",
	Name:     "UIServiceWithoutRuntime",
	Catches:  "A UI Service whose driver Pod has no sparkui-runtime sidecar.",
	Why:      "The UI Service starts without a selector and only the runtime sets one: without the runtime the Service never has endpoints.",
	Fix:      "Run sparkui-fn in transform mode on the manifests (it adds the sidecar), or remove the UI Service.",
	Failing: `kind: Pod        # a UI Service exists for it, but:
spec:
  containers: [{name: spark-kubernetes-driver}]
  # no initContainers[sparkui-runtime]: SUI008 spec.initContainers
`,
	Passing: `spec:
  initContainers:
  - name: sparkui-runtime
    restartPolicy: Always
    args: [run, --service=wordcount-…-ui-svc, --app-id=spark-7e0d…, --ui-port=0, --max-retries=16, --tls=false, --host-network=false]
`,
	Check: checkSUI008,
}

// RuntimeContainer finds the runtime among the Pod's init containers (where the native
// sidecar lives); index -1 when absent.
func RuntimeContainer(a *app.App) (int, *yaml.Node) {
	i, c, _ := runtimeContainerAt(a)
	return i, c
}

// runtimeContainerAt also gives the field path of the init containers the runtime belongs in
// (spec.initContainers of a Pod, spec.driver.template.spec.initContainers, …).
func runtimeContainerAt(a *app.App) (int, *yaml.Node, string) {
	list, path := a.Slot(app.SlotInitContainers)
	for i, c := range yamlx.Items(list) {
		if yamlx.GetStr(c, "name") == sidecar.ContainerName {
			return i, c, path
		}
	}
	return -1, nil, path
}

// checkSUI008: a selectorless UI Service nobody binds never serves anything.
func checkSUI008(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if a.UIService == nil || !a.Settings.UIEnabled {
			continue
		}
		if _, c, path := runtimeContainerAt(a); c == nil {
			out = append(out, Finding{Object: a.Object, Field: path,
				Msg: "the UI Service " + a.UIServiceName + " has no runtime to bind it: the driver Pod has no " + sidecar.ContainerName + " sidecar"})
		}
	}
	return out
}
