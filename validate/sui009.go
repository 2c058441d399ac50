package validate

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI009: the runtime's settings disagree with the application.
var SUI009 = Rule{
	ID:       "SUI009",
	Severity: framework.Error,
	Title:    "the runtime's settings disagree with the application",
	Name:     "RuntimeSettings",
	Catches:  "A runtime sidecar whose arguments (--service, --app-id, --guard-label, --selector, --owner-reference, --ui-port, --max-retries, --tls, --ssl-ui-port, --host-network, --skip-ports, --ui-filters) disagree with the application, that is not a native sidecar (restartPolicy: Always), whose startupProbe is not sparkui's (exec /sparkui-runtime --version, periodSeconds 1, timeoutSeconds 1, failureThreshold 10), that lacks POD_NAME, POD_NAMESPACE and POD_UID (and, for an operator resource or workload, the env its --selector names) from the downward API, whose --auth-bearer-file or --auth-header-file is not in a Secret volume mounted into it, a volume the runtime mounts (or sparkui's mount in the driver container) that is not among the driver Pod's volumes in the carrier's volume slot (on the kubeflow webhook injection also one the driver's spec.driver.volumeMounts does not mount: the operator's webhook adds no other), a driver Pod without the label the runtime selects it by (spark-app-selector for a spark-submit Pod, sparkui.dev/application on the pod template of an operator resource or workload), a kubeflow resource carrying the runtime on both injections (driver.template and the webhook fields), or History Server hand-off env (SPARKUI_HISTORY_URL, SPARKUI_REDIRECTOR_PORT) that the runtime refuses (not an absolute http(s) URL without query, fragment or credentials; not a port), that differs from the functionConfig's historyServer (checked when sparkui-fn runs the rules: validate alone does not know the config), or whose redirector port differs from another runtime's in the same namespace (its one redirector listens on one port).",
	Why:      "The runtime then probes the wrong ports or binds another Service; a mount without its volume gets the driver Pod refused; without restartPolicy: Always it is an ordinary init container that never exits, so the driver never starts, and its startupProbe is what makes the API server refuse such a Pod instead (a slower probe would hold back every driver's start); without the downward-API env it cannot guard its patches or withdraw; without the label the bound Service selects nothing.",
	Fix:      "Run sparkui-fn in transform mode again after changing spark.properties or the Pod: it rewrites the sidecar from the application.",
	Failing: `kind: ConfigMap
data:
  spark.properties: |
    spark.ui.port=4050
---
kind: Pod
spec:
  initContainers:
  - name: sparkui-runtime
    restartPolicy: Always
    args: [run, --service=wordcount-…-ui-svc, --app-id=spark-7e0d…, --ui-port=0, …]   # SUI009 spec.initContainers[0].args
`,
	Passing: `    args: [run, --service=wordcount-…-ui-svc, --app-id=spark-7e0d…, --ui-port=4050, …]
`,
	Check: checkSUI009,
}

var podEnv = map[string]string{
	sidecar.EnvHostIP:       "status.hostIP",
	sidecar.EnvPodName:      "metadata.name",
	sidecar.EnvPodNamespace: "metadata.namespace",
	sidecar.EnvPodUID:       "metadata.uid",
}

// checkSUI009: a runtime told the wrong Service, id, port, retries, TLS or network binds the
// wrong thing or nothing; without restartPolicy Always it is an init container that blocks
// the driver forever; without the downward-API env it cannot guard its patches.
func checkSUI009(ctx *Context) []Finding {
	var out []Finding
	ports := map[string]redirectorPort{} // namespace → the first sidecar's redirector port
	for _, a := range ctx.Model.Apps {
		i, c, list := runtimeContainerAt(a)
		if c == nil || !a.Settings.UIEnabled {
			continue
		}
		base := fmt.Sprintf("%s[%d]", list, i)
		if off := a.Carrier.OtherInjection(); off != nil {
			// Switching kubeflow injections on sparkui's own output without transform leaves both.
			inits, offList, _ := off.Lookup(app.SlotInitContainers)
			for j, e := range yamlx.Items(inits) {
				if yamlx.GetStr(e, "name") == sidecar.ContainerName {
					out = append(out, Finding{Object: a.Object, Field: fmt.Sprintf("%s[%d]", offList, j),
						Msg: "sparkui's runtime is on both kubeflow injections (" + base + " on the " + a.Carrier.Injection.String() + " injection in use): wherever the operator's webhook is installed the driver Pod gets both, and the API server refuses the duplicate container and volume names; run sparkui-fn in transform mode with this injection, which removes the other injection's copies"})
				}
			}
		}
		if yamlx.GetStr(c, "restartPolicy") != "Always" {
			out = append(out, Finding{Object: a.Object, Field: base + ".restartPolicy",
				Msg: "the runtime must be a native sidecar (restartPolicy: Always), or the driver never starts"})
		}
		if msg := checkStartupProbe(yamlx.Get(c, "startupProbe")); msg != "" {
			out = append(out, Finding{Object: a.Object, Field: base + ".startupProbe", Msg: msg})
		}
		var args []string
		for _, s := range yamlx.Items(yamlx.Get(c, "args")) {
			args = append(args, yamlx.Str(s))
		}
		got, err := sidecar.ParseArgs(args)
		// How the external URI is published is the functionConfig's choice, unknown here:
		// take the runtime's, and check below that the Pod and Service support it.
		want := a.RuntimeConfig(sidecar.ExternalURIMode(got.ExternalURI))
		if a.UIService != nil {
			// The runtime must bind the UI Service the input holds. When that Service's name is
			// invalid or taken, a.UIServiceName is the name transform would move it to, which
			// exists nowhere in the input: that is SUI006's finding, not a runtime mismatch.
			_, want.Service = metaName(a.UIService)
		}
		if err != nil {
			out = append(out, Finding{Object: a.Object, Field: base + ".args", Msg: "the runtime's args are unreadable: " + err.Error()})
		} else if diff := configDiff(got, want); diff != "" {
			out = append(out, Finding{Object: a.Object, Field: base + ".args", Msg: "the runtime's settings disagree with the application: " + diff})
		}
		// The runtime selects the driver by its identity label and its spark-role (driver, or
		// the role its operator gives it).
		if labels, path := a.Slot(app.SlotPodLabels); yamlx.StringMap(labels)[a.IdentityKey] != a.IdentityValue {
			out = append(out, Finding{Object: a.Object, Field: path,
				Msg: "the runtime binds the UI Service with selector " + a.IdentityKey + "=" + a.IdentityValue + "," + names.LabelSparkRole + "=" + a.Carrier.DriverRole() + ", but the driver Pod has no such label: the Service would select nothing"})
		}
		env := map[string]string{}
		for _, e := range yamlx.Items(yamlx.Get(c, "env")) {
			env[yamlx.GetStr(e, "name")] = yamlx.GetStr(e, "valueFrom", "fieldRef", "fieldPath")
		}
		needEnv := []string{sidecar.EnvPodName, sidecar.EnvPodNamespace, sidecar.EnvPodUID}
		extraEnv := map[string]string{}
		for _, e := range a.RuntimeEnv() {
			needEnv = append(needEnv, e[0])
			extraEnv[e[0]] = e[1]
		}
		if sidecar.ExternalURIMode(got.ExternalURI) == sidecar.ExternalURINodePort {
			needEnv = append(needEnv, sidecar.EnvHostIP)
		}
		if wantType := map[sidecar.ExternalURIMode]string{sidecar.ExternalURINodePort: "NodePort", sidecar.ExternalURILoadBalancer: "LoadBalancer"}[sidecar.ExternalURIMode(got.ExternalURI)]; wantType != "" && a.UIService != nil {
			if t := yamlx.GetStr(a.UIService.YNode(), "spec", "type"); t != wantType && !(wantType == "NodePort" && t == "LoadBalancer") {
				out = append(out, Finding{Object: a.Object, Field: base + ".args",
					Msg: "the runtime is to publish the external URI by " + got.ExternalURI + ", but the UI Service is of type " + t})
			}
		}
		out = append(out, checkMounts(a, c, base)...)
		if err == nil {
			out = append(out, checkAuthFiles(a, c, base, got)...)
		}
		out = append(out, checkHistoryEnv(ctx, a, c, base, ports)...)
		for _, name := range needEnv {
			wantPath := podEnv[name]
			if p, ok := extraEnv[name]; ok {
				wantPath = p
			}
			if env[name] != wantPath {
				out = append(out, Finding{Object: a.Object, Field: base + ".env",
					Msg: fmt.Sprintf("the runtime needs env %s from the downward API (fieldRef %s)", name, wantPath)})
			}
		}
	}
	return out
}

// checkStartupProbe: the runtime's startupProbe is what makes the API server refuse a driver
// Pod whose runtime lost restartPolicy: Always (sidecar.StartupProbe); as a native sidecar's
// startupProbe gates the driver's start, it must be the one that succeeds at once.
func checkStartupProbe(probe *yaml.Node) string {
	p := sidecar.StartupProbe
	want := fmt.Sprintf("exec %s, periodSeconds %d, timeoutSeconds %d, failureThreshold %d",
		strings.Join(p.Command, " "), p.PeriodSeconds, p.TimeoutSeconds, p.FailureThreshold)
	if probe == nil {
		return "the runtime has no startupProbe (want " + want + "): where an operator or its CRD drops restartPolicy: Always " +
			"(kubeflow before chart 1.3.2, see SUI042), that probe is what makes the API server refuse the driver Pod instead of " +
			"the driver never starting"
	}
	var d []string
	var cmd []string
	for _, e := range yamlx.Items(yamlx.Get(probe, "exec", "command")) {
		cmd = append(cmd, yamlx.Str(e))
	}
	if strings.Join(cmd, "\x00") != strings.Join(p.Command, "\x00") {
		d = append(d, fmt.Sprintf("exec.command is %q", cmd))
	}
	for _, h := range []string{"httpGet", "tcpSocket", "grpc"} {
		if yamlx.Get(probe, h) != nil {
			d = append(d, "it has a "+h+" handler")
		}
	}
	for _, f := range []struct {
		key, want string
		dflt      string
	}{
		{"periodSeconds", strconv.Itoa(p.PeriodSeconds), "10"},
		{"timeoutSeconds", strconv.Itoa(p.TimeoutSeconds), "1"},
		{"failureThreshold", strconv.Itoa(p.FailureThreshold), "3"},
		{"initialDelaySeconds", "0", "0"},
		{"successThreshold", "1", "1"},
	} {
		got := yamlx.GetStr(probe, f.key)
		if got == "" {
			got = f.dflt
		}
		if got != f.want {
			d = append(d, f.key+" is "+got)
		}
	}
	if len(d) == 0 {
		return ""
	}
	return "the runtime's startupProbe must be " + want + " (it gates the driver's start, so it must succeed at once): " + strings.Join(d, ", ")
}

func configDiff(got, want sidecar.Config) string {
	var d []string
	add := func(name string, g, w any) {
		if g == "" {
			g = "unset"
		}
		if w == "" {
			w = "unset"
		}
		if g != w {
			d = append(d, fmt.Sprintf("%s is %v, the application's is %v", name, g, w))
		}
	}
	add("--service", got.Service, want.Service)
	add("--app-id", got.AppID, want.AppID)
	add("--guard-label", got.GuardLabel, want.GuardLabel)
	add("--selector", got.PodSelector, want.PodSelector)
	add("--owner-reference", strconv.FormatBool(!got.NoOwnerReference), strconv.FormatBool(!want.NoOwnerReference))
	add("--ui-port", got.UIPort, want.UIPort)
	add("--max-retries", got.MaxRetries, want.MaxRetries)
	add("--tls", got.TLS, want.TLS)
	if want.TLS {
		add("--ssl-ui-port", got.SSLPort, want.SSLPort)
	}
	add("--host-network", got.HostNetwork, want.HostNetwork)
	add("--skip-ports", got.SkipPorts, want.SkipPorts)
	add("--ui-filters", got.UIFilters, want.UIFilters)
	if got.ExternalURI != "" && !sidecar.ResolvesURI(sidecar.ExternalURIMode(got.ExternalURI)) {
		d = append(d, "--external-uri is "+got.ExternalURI+", which the runtime does not resolve (nodePort or loadBalancer)")
	}
	return strings.Join(d, "; ")
}

// checkMounts: a volume the runtime container mounts, or that sparkui mounts into the driver
// container, must be one of the driver Pod's volumes, in the slot the carrier's operator or
// controller takes them from; otherwise the API server refuses the Pod ("volumeMounts[i].name:
// Not found"). On the kubeflow webhook injection the webhook adds a spec.volumes entry to the Pod
// only when spec.driver.volumeMounts mounts it (kubeflow/spark-operator
// internal/webhook/sparkpod_defaulter.go addVolumes): a volume only the runtime mounts is
// dropped there.
func checkMounts(a *app.App, c *yaml.Node, base string) []Finding {
	var out []Finding
	vols, volPath := a.Slot(app.SlotVolumes)
	has := map[string]bool{}
	for _, v := range yamlx.Items(vols) {
		has[yamlx.GetStr(v, "name")] = true
	}
	drv, drvPath := a.Slot(app.SlotDriverContainer)
	webhook := a.Carrier.ViaWebhook()
	driverMounts := map[string]bool{}
	for j, m := range yamlx.Items(yamlx.Get(drv, "volumeMounts")) {
		name := yamlx.GetStr(m, "name")
		driverMounts[name] = true
		if (name == sidecar.VolumeName || name == sidecar.AuthVolumeName) && !has[name] {
			out = append(out, Finding{Object: a.Object, Field: fmt.Sprintf("%s.volumeMounts[%d]", drvPath, j),
				Msg: "the driver container mounts volume " + name + ", which is not in " + volPath + ": the driver Pod is refused"})
		}
	}
	for j, m := range yamlx.Items(yamlx.Get(c, "volumeMounts")) {
		name := yamlx.GetStr(m, "name")
		field := fmt.Sprintf("%s.volumeMounts[%d]", base, j)
		switch {
		case !has[name]:
			out = append(out, Finding{Object: a.Object, Field: field,
				Msg: "the runtime mounts volume " + name + ", which is not in " + volPath + ": the driver Pod is refused"})
		case webhook && !driverMounts[name]:
			out = append(out, Finding{Object: a.Object, Field: field,
				Msg: "the runtime mounts volume " + name + ", but " + drvPath + ".volumeMounts does not: kubeflow's webhook adds only the volumes the driver mounts to the driver Pod, which is then refused"})
		}
	}
	return out
}

// checkAuthFiles: a credential file the runtime is told to read must come from a Secret
// volume mounted into the runtime container, or every probe goes out without it. A mount
// whose volume is missing is checkMounts' finding.
func checkAuthFiles(a *app.App, c *yaml.Node, base string, got sidecar.Config) []Finding {
	var out []Finding
	vols, _ := a.Slot(app.SlotVolumes)
	for _, f := range []struct{ flag, file string }{{"--auth-bearer-file", got.AuthBearerFile}, {"--auth-header-file", got.AuthHeaderFile}} {
		if f.file == "" {
			continue
		}
		volume := ""
		for _, m := range yamlx.Items(yamlx.Get(c, "volumeMounts")) {
			mp := strings.TrimSuffix(yamlx.GetStr(m, "mountPath"), "/")
			if mp != "" && strings.HasPrefix(f.file, mp+"/") && yamlx.GetStr(m, "subPath") == "" {
				volume = yamlx.GetStr(m, "name")
			}
		}
		secret, missing := false, volume != ""
		for _, v := range yamlx.Items(vols) {
			if volume != "" && yamlx.GetStr(v, "name") == volume {
				missing = false
				secret = yamlx.Get(v, "secret") != nil || yamlx.Get(v, "projected") != nil
			}
		}
		if !secret && !missing {
			out = append(out, Finding{Object: a.Object, Field: base + ".volumeMounts",
				Msg: "the runtime reads its credential from " + f.file + " (" + f.flag + "), but no Secret volume is mounted there in the runtime container"})
		}
	}
	return out
}

// redirectorPort is the redirector port a runtime of the namespace was told, and by whom.
type redirectorPort struct {
	port  int
	where string
}

// checkHistoryEnv checks the History Server hand-off's env (SPARKUI_HISTORY_URL,
// SPARKUI_REDIRECTOR_PORT): literal values the runtime accepts (it refuses to run with
// others), the functionConfig's when known, and one redirector port per namespace (its one
// redirector listens on one port: a Service handed off to another port reaches nothing).
func checkHistoryEnv(ctx *Context, a *app.App, c *yaml.Node, base string, ports map[string]redirectorPort) []Finding {
	var out []Finding
	vals := map[string]string{}
	for _, e := range yamlx.Items(yamlx.Get(c, "env")) {
		name := yamlx.GetStr(e, "name")
		if name != sidecar.EnvHistoryURL && name != sidecar.EnvRedirectorPort {
			continue
		}
		if yamlx.Get(e, "valueFrom") != nil {
			out = append(out, Finding{Object: a.Object, Field: base + ".env", Msg: "the runtime's env " + name + " must be a literal value, as sparkui-fn writes it"})
			continue
		}
		vals[name] = yamlx.GetStr(e, "value")
	}
	url, hasURL := vals[sidecar.EnvHistoryURL]
	portStr, hasPort := vals[sidecar.EnvRedirectorPort]
	port := sidecar.DefaultRedirectorPort
	if hasURL {
		if err := sidecar.CheckHistoryURL(url); err != nil {
			out = append(out, Finding{Object: a.Object, Field: base + ".env",
				Msg: "the runtime's " + sidecar.EnvHistoryURL + ": " + err.Error() + "; the runtime refuses it and never binds"})
		}
	}
	if hasPort {
		p, err := strconv.Atoi(portStr)
		if err == nil {
			err = sidecar.CheckRedirectorPort(p)
		}
		if err != nil {
			out = append(out, Finding{Object: a.Object, Field: base + ".env",
				Msg: fmt.Sprintf("the runtime's %s %q is not a port in 1-65535; the runtime refuses it and never binds", sidecar.EnvRedirectorPort, portStr)})
		}
		port = p
	}
	if h := ctx.History; h != nil {
		want := h.URL
		switch {
		case url != want:
			out = append(out, Finding{Object: a.Object, Field: base + ".env", Msg: fmt.Sprintf(
				"the runtime's History Server URL (%s) is %q, the functionConfig's historyServer.url %q", sidecar.EnvHistoryURL, url, want)})
		case want != "" && port != h.RedirectorPort:
			out = append(out, Finding{Object: a.Object, Field: base + ".env", Msg: fmt.Sprintf(
				"the runtime's redirector port (%s) is %d, the functionConfig's historyServer.redirectorPort %d", sidecar.EnvRedirectorPort, port, h.RedirectorPort)})
		}
	}
	if hasURL && (!hasPort || sidecar.CheckRedirectorPort(port) == nil) {
		where := a.Namespace + "/" + a.Object.GetName()
		if first, seen := ports[a.Namespace]; !seen {
			ports[a.Namespace] = redirectorPort{port, where}
		} else if first.port != port {
			out = append(out, Finding{Object: a.Object, Field: base + ".env", Msg: fmt.Sprintf(
				"the runtime hands the UI Service off to redirector port %d, but %s's runtime in the same namespace to %d: the namespace's one redirector listens on one port",
				port, first.where, first.port)})
		}
	}
	return out
}
