package function

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestUnknownFieldSuggestions: a mistyped field, in either form, names the field it most
// likely meant and the valid ones at that place; a name close to nothing suggests nothing.
func TestUnknownFieldSuggestions(t *testing.T) {
	const typed = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata: {name: x}\nspec:\n"
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
	for _, tc := range []struct{ config, want string }{
		{typed + "  service: {prot: 80}\n",
			"[SUI014] invalid functionConfig: spec.service.prot: unknown field; did you mean port? Valid fields here: enabled, externalURI, port, type"},
		{typed + "  rbak: {create: false}\n",
			"[SUI014] invalid functionConfig: spec.rbak: unknown field; did you mean rbac? Valid fields here: historyServer, kubeflow, mode, rbac, route, runtime, service, sparkConf"},
		{typed + "  service: {colour: blue}\n",
			"[SUI014] invalid functionConfig: spec.service.colour: unknown field. Valid fields here: enabled, externalURI, port, type"},
		{typed + "  service: {Type: NodePort, prot: 1}\n",
			"[SUI014] invalid functionConfig: spec.service.Type, prot: unknown fields; did you mean Type → type, prot → port? Valid fields here: enabled, externalURI, port, type"},
		{typed + "  historyServer: {URL: https://h}\n",
			"[SUI014] invalid functionConfig: spec.historyServer.URL: unknown field; did you mean url? Valid fields here: redirectorPort, url"},
		{cm + "  servicePrt: \"80\"\n",
			"[SUI014] invalid functionConfig: data.servicePrt: unknown key; did you mean servicePort? Known keys: " + allKeys},
		{cm + "  sparkui.ui.port: \"80\"\n",
			`[SUI014] invalid functionConfig: data["sparkui.ui.port"]: unknown key; Spark properties start with "spark.". Known keys: ` + allKeys},
		{cm + "  colour: blue\n",
			"[SUI014] invalid functionConfig: data.colour: unknown key. Known keys: " + allKeys},
	} {
		_, results := LoadConfig(yaml.MustParse(tc.config))
		if len(results) != 1 || results[0].Message != tc.want {
			t.Errorf("%s: results %v\nwant one: %s", tc.config, results, tc.want)
		}
	}
}

const allKeys = "authBearerSecret, authHeaderSecret, createRBAC, externalURI, historyRedirectorPort, historyServerURL, kubeflowInjection, mode, routeGRPC, routeGRPCHostname, routeHostname, routeIngressClass, routeKind, routeParentRef, routePathPrefix, routeTLSSecret, runtimeEvents, runtimeImage, serviceEnabled, servicePort, serviceType, and spark.* properties"

func TestNearest(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"prot", "port"}, {"enabeld", "enabled"}, {"externalUri", "externalURI"}, {"x", ""}, {"colour", ""},
	} {
		if got := nearest(tc.name, []string{"enabled", "externalURI", "port", "type"}); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
