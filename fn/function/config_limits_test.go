package function

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
)

// TestRouteConfigLimits: a route value the route's API would refuse for every application
// (an IP as host, a DNS label over 63 characters, a prefix longer than the HTTPRoute's path
// match or the Route's header value, more parentRefs than a route holds) is one SUI014 result
// at the field; the same values one short of the bound pass.
func TestRouteConfigLimits(t *testing.T) {
	label63, label64 := strings.Repeat("a", 63), strings.Repeat("a", 64)
	refs := func(n int) string {
		return "    parentRefs: [" + strings.TrimSuffix(strings.Repeat("{name: gw}, ", n), ", ") + "]\n"
	}
	const ipMsg = `is an IP address: a route's host must be a DNS name (Gateway API: "IPs are not allowed"; the API server refuses an Ingress host that is an IP)`
	for _, tc := range []struct{ fc, field, msg string }{
		{typedHead + "    kind: Ingress\n    hostname: 10.0.0.1\n", "spec.route.hostname", `"10.0.0.1" ` + ipMsg},
		{typedHead + "    kind: Route\n    hostname: 010.000.000.001\n", "spec.route.hostname", `"010.000.000.001" ` + ipMsg},
		{typedHead + "    kind: HTTPRoute\n    hostname: 192.168.1.20\n" + refs(1), "spec.route.hostname", `"192.168.1.20" ` + ipMsg},
		{typedHead + "    kind: HTTPRoute\n    hostname: ui.example.com\n    grpc: true\n    grpcHostname: 10.1.2.3\n" + refs(1), "spec.route.grpcHostname", `"10.1.2.3" ` + ipMsg},
		{typedHead + "    kind: Ingress\n    hostname: " + label64 + ".example.com\n", "spec.route.hostname",
			`"` + label64 + `.example.com" has a DNS label of 64 characters: must be no more than 63 characters (RFC 1035: no DNS name holds a longer label)`},
		{typedHead + "    kind: Ingress\n    hostname: '{name}-" + label63[:62] + ".example.com'\n", "spec.route.hostname",
			`"{name}-` + label63[:62] + `.example.com" expands, even with one-character {namespace} and {name}, to a value that has a DNS label of 64 characters: must be no more than 63 characters (RFC 1035: no DNS name holds a longer label)`},
		{typedHead + "    kind: HTTPRoute\n    pathPrefix: /" + strings.Repeat("a", 1024) + "\n" + refs(1), "spec.route.pathPrefix",
			`"/` + strings.Repeat("a", 1024) + `" is 1025 characters long: an HTTPRoute path match value has at most 1024 (Gateway API HTTPPathMatch.Value)`},
		{typedHead + "    kind: HTTPRoute\n    pathPrefix: /{namespace}/" + strings.Repeat("a", 1022) + "\n" + refs(1), "spec.route.pathPrefix",
			`"/{namespace}/` + strings.Repeat("a", 1022) + `" expands, even with one-character {namespace} and {name}, to a value that is 1025 characters long: an HTTPRoute path match value has at most 1024 (Gateway API HTTPPathMatch.Value)`},
		{typedHead + "    kind: Route\n    hostname: h.example.com\n    pathPrefix: /" + strings.Repeat("a", 16384) + "\n", "spec.route.pathPrefix",
			`"/` + strings.Repeat("a", 16384) + `" is 16385 characters long: the X-Forwarded-Context header value the Route sets (spec.httpHeaders) has at most 16384`},
		{typedHead + "    kind: HTTPRoute\n" + refs(33), "spec.route.parentRefs", "maximum 32 items required, but found 33 items"},
		// Checked whatever the kind, as the other hostname checks are.
		{typedHead + "    hostname: 10.0.0.1\n", "spec.route.hostname", `"10.0.0.1" ` + ipMsg},
	} {
		_, res := LoadConfig(yaml.MustParse(tc.fc))
		if len(res) != 1 || res[0].Field == nil || res[0].Field.Path != tc.field || res[0].Tags["rule"] != "SUI014" || res[0].Message != "[SUI014] invalid functionConfig: "+tc.field+": "+tc.msg {
			t.Errorf("%.120q:\n got %v\nwant one SUI014 at %s: %.300s", tc.fc, res, tc.field, tc.msg)
		}
	}
	// A prefix past the header bound is past the path bound too: both are said.
	p := "/" + strings.Repeat("h", 4096)
	_, res := LoadConfig(yaml.MustParse(typedHead + "    kind: HTTPRoute\n    pathPrefix: " + p + "\n" + refs(1)))
	var msgs []string
	for _, r := range res {
		msgs = append(msgs, strings.TrimPrefix(r.Message, "[SUI014] invalid functionConfig: spec.route.pathPrefix: \""+p+"\" "))
	}
	if want := []string{
		"is 4097 characters long: an HTTPRoute path match value has at most 1024 (Gateway API HTTPPathMatch.Value)",
		"is 4097 characters long: the X-Forwarded-Context header value the HTTPRoute sets has at most 4096 (Gateway API HTTPHeader.Value)",
	}; !slices.Equal(msgs, want) {
		t.Errorf("prefix of 4097: %q, want %q", msgs, want)
	}
	// At the bounds: accepted.
	for _, fc := range []string{
		typedHead + "    kind: Ingress\n    hostname: " + label63 + ".example.com\n",
		typedHead + "    kind: HTTPRoute\n    hostname: 10.0.0.1.example.com\n    pathPrefix: /" + strings.Repeat("a", 1023) + "\n" + refs(32),
		typedHead + "    kind: HTTPRoute\n    pathPrefix: /{namespace}/" + strings.Repeat("a", 1021) + "\n" + refs(1),
		typedHead + "    kind: Route\n    hostname: h.example.com\n    pathPrefix: /" + strings.Repeat("a", 16383) + "\n",
		// Only some applications' names make an IP or a long label: SUI053 for those alone.
		typedHead + "    kind: Ingress\n    hostname: '10.0.0.{name}'\n",
		typedHead + "    kind: Ingress\n    hostname: '{name}.example.com'\n",
	} {
		if _, res := LoadConfig(yaml.MustParse(fc)); len(res) != 0 {
			t.Errorf("%.120q: %v, want no result", fc, res)
		}
	}
}

// TestHistoryURLBound: the longest historyServer.url is the one whose hand-off URI, with the
// longest app id (a label value, 63), is RFC 9110's 8000 octets; one more is SUI014 in both
// forms.
func TestHistoryURLBound(t *testing.T) {
	base := "https://shs.example.com/"
	at := base + strings.Repeat("a", sidecar.MaxHistoryURL-len(base))
	if got := len(sidecar.HistoryURI(at, strings.Repeat("x", sidecar.MaxAppIDLength))); got != sidecar.MaxHistoryURI {
		t.Fatalf("URI at the bound is %d octets, want %d", got, sidecar.MaxHistoryURI)
	}
	if sidecar.MaxHistoryURL != 7927 {
		t.Errorf("MaxHistoryURL = %d, want 7927 (docs/history.md, docs/configuration.md)", sidecar.MaxHistoryURL)
	}
	over := at + "b"
	const typed = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nspec:\n  historyServer:\n    url: "
	if _, res := LoadConfig(yaml.MustParse(typed + at + "\n")); len(res) != 0 {
		t.Errorf("URL of %d characters: %v", len(at), res)
	}
	for fc, field := range map[string]string{
		typed + over + "\n": "spec.historyServer.url",
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  historyServerURL: " + over + "\n": "data.historyServerURL",
	} {
		_, res := LoadConfig(yaml.MustParse(fc))
		want := "[SUI014] invalid functionConfig: " + field + ": is 7928 characters long: at most 7927, so that <url>/history/<app id>/ (an id of up to 63 characters) stays within the 8000 octets every HTTP client and proxy supports in a URI (RFC 9110) and fits the UI Service's annotations at hand-off"
		if len(res) != 1 || res[0].Field == nil || res[0].Field.Path != field || res[0].Message != want {
			t.Errorf("%s: %v, want %s", field, res, want)
		}
	}
}
