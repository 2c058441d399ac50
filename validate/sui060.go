package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/sidecar"
)

// SUI060: validate mode was given an application sparkui-fn never transformed. The gate it
// guards is a pipeline where the function is expected to have run (kustomize, kpt, CI): when
// a kustomize build skipped the exec function (no --enable-exec) the output is the
// untransformed input, exit 0, and without this rule validating that output passed too.
var SUI060 = Rule{
	ID:       "SUI060",
	Severity: framework.Error,
	Title:    "sparkui-fn has not transformed this application",
	Name:     "ApplicationNotTransformed",
	Catches:  "In validate mode (`sparkui-fn validate`, or the function with mode: validate), an application whose UI is on while the functionConfig has service.enabled (the default), and which has none of what transform mode adds: no UI Service, no sparkui-runtime sidecar, no Role.",
	Why:      "It is the output of a pipeline in which the function did not run: kustomize build with --enable-alpha-plugins but without --enable-exec skips an exec function silently and exits 0 (kpt, and kustomize without either flag, stop with an error instead); a kustomization that does not list the function's config under transformers:, or manifests taken from before the render step, give the same. Applied, such an application has no UI Service at all, or only the operator's, which targets the declared port rather than the one the UI bound.",
	Fix:      "Run sparkui-fn in transform mode before validating: `kustomize build --enable-alpha-plugins --enable-exec DIR` with the function's config under transformers: (its exec path is relative to the kustomization directory), `kpt fn render --allow-exec`, or `sparkui-fn CONFIG FILE`. If this application must not get a UI Service, set service.enabled: false (ConfigMap key serviceEnabled: \"false\") in the --config given to the check, or spark.ui.enabled=false in its Spark conf.",
	Failing: `# kustomize build --enable-alpha-plugins examples/kubeflow | sparkui-fn validate -
# (no --enable-exec: the function never ran)
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi      # SUI060: no spark-pi-sparkui-ui-svc, no sparkui-runtime, no Role
`,
	Passing: `# kustomize build --enable-alpha-plugins --enable-exec examples/kubeflow | sparkui-fn validate -
kind: SparkApplication   # with its sparkui-runtime sidecar in the driver template
---
kind: Service
metadata:
  name: spark-pi-sparkui-ui-svc
`,
	PassingNote: "A functionConfig with service.enabled: false, or an application with spark.ui.enabled=false, passes: transform mode adds nothing to either. Transform mode never reports SUI060 (it has just added what the rule looks for).",
	Check:       checkSUI060,
}

// checkSUI060 reports an application with nothing sparkui adds, once, on its carrier.
func checkSUI060(ctx *Context) []Finding {
	if ctx.Expect == nil || !ctx.Expect.UIService {
		return nil
	}
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Settings.UIEnabled || a.UIService != nil || a.Role != nil || a.RoleBinding != nil {
			continue
		}
		if _, c := RuntimeContainer(a); c != nil {
			continue
		}
		if a.Carrier == nil {
			continue
		}
		if err := a.Carrier.Writable(); err != nil {
			// Transform would refuse it too (SUI030 in transform mode): say what to fix first.
			out = append(out, Finding{Object: a.Object,
				Msg: "sparkui-fn has not transformed this application, and would refuse to: " + err.Error() + "; fix that field, then run sparkui-fn in transform mode before this check"})
			continue
		}
		out = append(out, Finding{Object: a.Object,
			Msg: "sparkui-fn has not transformed this application: " + objName(a.Object) + " has no UI Service (transform mode adds " + a.UIServiceName +
				"), no " + sidecar.ContainerName + " sidecar and no Role, while the functionConfig has service.enabled: true. " +
				"Run sparkui-fn in transform mode before this check: kustomize build --enable-alpha-plugins --enable-exec, or kpt fn render --allow-exec"})
	}
	return out
}
