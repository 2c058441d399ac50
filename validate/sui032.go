package validate

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI032: the kubeflow operator's own UI Service will also exist.
var SUI032 = Rule{
	ID:       "SUI032",
	Severity: framework.Warning,
	Title:    "the kubeflow operator's own UI Service will also exist",
	Name:     "KubeflowOwnUIService",
	Catches:  "A kubeflow SparkApplication or ScheduledSparkApplication with the UI on: the operator, unless switched off operator-wide, creates its own Service <app>-ui-svc for every run. A kubeflow SparkConnect with the UI on: its server Service (<name>-server, or spec.server.service's name) always has a UI port.",
	Why:      "That Service selects the driver by sparkoperator.k8s.io/app-name and spark-role=driver and targets the declared spark.ui.port (else 4040), not the port the UI really bound: when Spark moves to port+N, or with TLS, it points at the wrong port, and it takes over any Service of its name (internal/controller/sparkapplication/web_ui.go, driveringress.go). A SparkConnect's server Service has port web-ui 4040 with targetPort 4040 whatever spark.ui.port says (internal/controller/sparkconnect/reconciler.go mutateServerService). sparkui's <name>-sparkui-ui-svc never collides with either, but users may reach for the wrong one.",
	Fix:      "Use sparkui's <name>-sparkui-ui-svc. To have only that one for a SparkApplication, switch the operator's off, operator-wide (there is no per-application switch): controller flag --enable-ui-service=false, Helm value controller.uiService.enable=false (v1.x: -enable-ui-service=false, Helm uiService.enable=false). A SparkConnect's server Service cannot lose its web-ui port: ignore that port.",
	Failing: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: pi        # SUI032 (warning): the operator also creates pi-ui-svc
`,
	PassingNote: "Nothing in the resource turns the operator's Service off: it is an operator-wide setting. An application with spark.ui.enabled=false passes.",
	Check:       checkSUI032,
}

// checkSUI032 warns once per kubeflow application whose UI is on.
func checkSUI032(ctx *Context) []Finding {
	var out []Finding
	for _, a := range ctx.Model.Apps {
		if !a.Settings.UIEnabled {
			continue
		}
		for _, msg := range a.Carrier.OperatorUIServices(a.UIServiceName, sparkuiService(a)) {
			out = append(out, Finding{Object: a.Object, Msg: msg})
		}
	}
	return out
}

// sparkuiService names sparkui's UI Service for advice: by name only when it is in the input,
// since a name the user cannot find (the function has not run) sends them looking for nothing.
func sparkuiService(a *app.App) string {
	if a.UIService == nil {
		return "the UI Service sparkui-fn adds in transform mode (none is in the input)"
	}
	return a.UIServiceName
}
