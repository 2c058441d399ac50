package main

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRouteReplacesProxyBaseSays: a spark.ui.proxyBase that sparkui did not write and that the
// route replaces or removes is a SUI044 warning naming the old value and the conf field
// (an operator's sparkConf entry, a driver ConfigMap's spark.properties); the prefix sparkui
// recorded on the UI Service (its previous run's) is replaced without a word.
func TestRouteReplacesProxyBaseSays(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	inPlace := read("../testdata/route-update-in-place/input.yaml")
	openshift := read("../testdata/route-openshift/input.yaml")
	for _, tc := range []struct {
		name, in   string
		want, path string
	}{
		{"user's value in sparkConf", inPlace,
			`[SUI044] spark.ui.proxyBase was "/old", which contradicts the route; sparkui set it to /spark/analytics/pi-estimate, the route's prefix`, `spec.sparkConf["spark.ui.proxyBase"]`},
		{"sparkui's previous prefix", strings.Replace(strings.Replace(inPlace, "spark.ui.proxyBase: /old", "spark.ui.proxyBase: /spark/old", 1),
			"sparkui.dev/route-prefix: /spark/analytics/pi-estimate", "sparkui.dev/route-prefix: /spark/old", 1), "", ""},
		{"removed at the root", strings.Replace(inPlace, "pathPrefix: /spark/{namespace}/{name}", "pathPrefix: /", 1),
			`[SUI044] spark.ui.proxyBase was "/old", which contradicts the route; sparkui removed it: the route serves the UI at the root`, `spec.sparkConf["spark.ui.proxyBase"]`},
		{"user's value in the driver ConfigMap", strings.Replace(openshift, "      spark.kubernetes.submitInDriver=true\n", "      spark.kubernetes.submitInDriver=true\n      spark.ui.proxyBase=/nginx/wordcount\n", 1),
			`[SUI044] spark.ui.proxyBase was "/nginx/wordcount", which contradicts the route; sparkui set it to /ui/`, `data["spark.properties"]`},
		{"already the route's", openshift, "", ""},
	} {
		out := runProcessor(t, []byte(tc.in))
		if tc.name == "sparkui's previous prefix" && !strings.Contains(string(out), "spark.ui.proxyBase: /spark/analytics/pi-estimate\n") {
			t.Errorf("%s: proxyBase not replaced:\n%s", tc.name, out)
		}
		rl := yaml.MustParse(string(out))
		var got []*yaml.RNode
		res, _ := rl.Pipe(yaml.Lookup("results"))
		if res != nil {
			items, _ := res.Elements()
			for _, r := range items {
				if tag, _ := r.Pipe(yaml.Lookup("tags", "rule")); tag != nil && yaml.GetValue(tag) == "SUI044" {
					got = append(got, r)
				}
			}
		}
		if tc.want == "" {
			if len(got) != 0 {
				t.Errorf("%s: %v, want no SUI044", tc.name, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: %d SUI044 results, want 1:\n%s", tc.name, len(got), out)
			continue
		}
		msg, _ := got[0].GetString("message")
		sev, _ := got[0].GetString("severity")
		path, _ := got[0].GetString("field.path")
		if !strings.HasPrefix(msg, tc.want) || sev != "warning" || path != tc.path {
			t.Errorf("%s: %s %s at %s; want a warning at %s starting %s", tc.name, sev, msg, path, tc.path, tc.want)
		}
	}
}
