package function

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
)

// TestHistoryServerConfig: both forms set the hand-off; the port defaults to 8080; a URL the
// hand-off cannot use, or a port that is not one, is a SUI014 result naming the field as the
// user wrote it.
func TestHistoryServerConfig(t *testing.T) {
	const typed = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nspec:\n  historyServer:\n"
	for _, tc := range []struct {
		fc       string
		want     sidecar.History
		errField string
		errMsg   string
	}{
		{"", sidecar.History{RedirectorPort: 8080}, "", ""},
		{typed + "    url: https://shs.example.com\n", sidecar.History{URL: "https://shs.example.com", RedirectorPort: 8080}, "", ""},
		{typed + "    url: http://shs:18080/spark/\n    redirectorPort: 9090\n", sidecar.History{URL: "http://shs:18080/spark/", RedirectorPort: 9090}, "", ""},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  historyServerURL: https://shs.example.com\n  historyRedirectorPort: \"9090\"\n",
			sidecar.History{URL: "https://shs.example.com", RedirectorPort: 9090}, "", ""},
		{typed + "    url: shs.example.com\n", sidecar.History{}, "spec.historyServer.url", "is not an absolute http or https URL"},
		{typed + "    url: https://shs.example.com/?x=1\n", sidecar.History{}, "spec.historyServer.url", "has a query"},
		{typed + "    url: https://shs.example.com/#a\n", sidecar.History{}, "spec.historyServer.url", "has a fragment"},
		{typed + "    url: https://user:pw@shs.example.com\n", sidecar.History{}, "spec.historyServer.url", "carries credentials"},
		{typed + "    url: https://shs.example.com\n    redirectorPort: 0\n", sidecar.History{}, "spec.historyServer.redirectorPort", "must be >= 1 but found 0"},
		{typed + "    url: https://shs.example.com\n    redirectorPort: 65536\n", sidecar.History{}, "spec.historyServer.redirectorPort", "must be <= 65535 but found 65536"},
		{typed + "    uri: https://shs.example.com\n", sidecar.History{}, "spec.historyServer.uri", "unknown field"},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  historyServerURL: ftp://shs\n", sidecar.History{}, "data.historyServerURL", "is not an absolute http or https URL"},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  historyRedirectorPort: http\n", sidecar.History{}, "data.historyRedirectorPort", "is not an integer"},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  historyRedirectorPort: \"0\"\n", sidecar.History{}, "data.historyRedirectorPort", "must be >= 1 but found 0"},
	} {
		var fc *yaml.RNode
		if tc.fc != "" {
			fc = yaml.MustParse(tc.fc)
		}
		cfg, res := LoadConfig(fc)
		if tc.errField != "" {
			if len(res) != 1 || res[0].Field == nil || res[0].Field.Path != tc.errField || res[0].Tags["rule"] != "SUI014" || !strings.Contains(res[0].Message, tc.errMsg) {
				t.Errorf("%q: results %v, want one SUI014 at %s with %q", tc.fc, res, tc.errField, tc.errMsg)
			}
			continue
		}
		if len(res) > 0 || cfg.Transform.History != tc.want {
			t.Errorf("%q: history %+v, results %v; want %+v", tc.fc, cfg.Transform.History, res, tc.want)
		}
	}
}
