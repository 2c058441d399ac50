package names

import (
	"crypto/md5"
	"encoding/hex"
)

// The names operators give the Services they create for a resource, which sparkui's UI
// Service must never take: the operator would overwrite it (kubeflow: its ports, selector,
// labels and owner, driveringress.go createDriverIngressService) and route it to the wrong
// port.
//
// kubeflow spark-operator (github.com/kubeflow/spark-operator, read at 38082f33, after
// v2.5.2), per SparkApplication <app>:
//   - <app>-ui-svc, the UI Service (pkg/util/sparkapplication.go GetDefaultUIServiceName,
//     created by internal/controller/sparkapplication/web_ui.go createWebUIService);
//   - <app>-ui-ingress (GetDefaultUIIngressName) and <app>-ing-<port>, Ingresses, not
//     Services; <app>-driver-<port>, the Service of each spec.driverIngressOptions entry
//     (driveringress.go getDriverIngressServiceName); <app>-driver, the driver Pod: none of
//     these ends in -ui-svc, so none can equal a name sparkui gives a Service.
//   - a ScheduledSparkApplication <ssa> runs SparkApplications <ssa>-<timestamp>
//     (scheduledsparkapplication/controller.go), whose UI Services <ssa>-<timestamp>-ui-svc
//     are not known at build time; sparkui's <name>-sparkui-ui-svc cannot be one (a
//     timestamp is digits).
//   - a SparkConnect <name> gets the Service <name>-server, no -ui-svc, unless
//     spec.server.service is set: then that Service under its own metadata.name, which may be
//     anything (sparkconnect/util.go GetServerServiceName).
//
// So the names to keep clear of are KubeflowUIService of every SparkApplication in the
// namespace (for app foo, sparkui's UI Service foo-sparkui-ui-svc is exactly the operator's
// UI Service of an app called foo-sparkui) and every SparkConnect's server Service: the
// carrier adapters name them (internal/app, the adapters' operatorServices).

// KubeflowUIServicePattern is KubeflowUIService's rule, for messages.
const KubeflowUIServicePattern = "<app>-ui-svc"

// KubeflowUIService is the name of the UI Service the kubeflow operator creates for
// SparkApplication app (generateName(app, "ui-svc"): <app>-ui-svc, or when that is over
// 63 characters the name cut to 63-6-10 characters, "-", the first 8 hex digits of the MD5 of
// <app>-ui-svc, "-ui-svc").
func KubeflowUIService(app string) string { return kubeflowName(app, "ui-svc") }

func kubeflowName(name, suffix string) string {
	preferred := name + "-" + suffix
	if len(preferred) <= 63 {
		return preferred
	}
	sum := md5.Sum([]byte(preferred))
	return name[:63-len(suffix)-10] + "-" + hex.EncodeToString(sum[:])[:8] + "-" + suffix
}
