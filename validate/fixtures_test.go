package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// UPDATE_GOLDEN=1 go test ./validate -run TestRuleFixtures rewrites the results.yaml files;
// review the diff.
var update = os.Getenv("UPDATE_GOLDEN") == "1"

var fixtureName = regexp.MustCompile(`^(sui\d{3})-(fail|pass)(-[a-z0-9-]+)?$`)

// TestRuleFixtures runs every rule fixture of testdata: a ResourceList in validate mode
// (input.yaml) and the results validation gives for it (results.yaml), compared whole. Every
// rule with a check has a failing (suiNNN-fail…) fixture, which reports it at the catalog's
// severity, and a passing (suiNNN-pass…) one, which does not; every result is tagged and
// prefixed with its rule; and validation leaves the items as they were.
func TestRuleFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]map[string]bool{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		m := fixtureName.FindStringSubmatch(name)
		if m == nil {
			t.Errorf("%s: fixture names are suiNNN-fail[-what] or suiNNN-pass[-what]", name)
			continue
		}
		id, kind := strings.ToUpper(m[1]), m[2]
		rule, ok := Lookup(id)
		if !ok {
			t.Errorf("%s: no rule %s", name, id)
			continue
		}
		if has[id] == nil {
			has[id] = map[string]bool{}
		}
		has[id][kind] = true
		t.Run(name, func(t *testing.T) {
			results := runFixture(t, filepath.Join(dir, "input.yaml"))
			own := false
			for _, r := range results {
				ruleID := r.Tags["rule"]
				if !strings.HasPrefix(r.Message, "["+ruleID+"] ") {
					t.Errorf("message %q does not start with [%s]", r.Message, ruleID)
				}
				if ruleID == id {
					own = true
					if kind == "fail" && r.Severity != rule.Severity {
						t.Errorf("%s has severity %s, the catalog says %s", id, r.Severity, rule.Severity)
					}
				}
			}
			if kind == "fail" && !own {
				t.Errorf("failing fixture has no %s result", id)
			}
			if kind == "pass" && own {
				t.Errorf("passing fixture has a %s result", id)
			}
			got, err := yaml.Marshal(results)
			if err != nil {
				t.Fatal(err)
			}
			if len(results) == 0 {
				got = []byte("[]\n")
			}
			golden := filepath.Join(dir, "results.yaml")
			if update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("results differ from results.yaml (-want +got):\n%s", d)
			}
		})
	}
	for _, r := range Rules {
		if r.Check == nil {
			continue // SUI014 is the functionConfig's: testdata/bad-config* at the top level
		}
		if !has[r.ID]["fail"] || !has[r.ID]["pass"] {
			t.Errorf("%s lacks a failing or a passing fixture in testdata", r.ID)
		}
	}
}

// runFixture validates a fixture the way the function does in validate mode, and checks that
// the items come out as they went in.
func runFixture(t *testing.T, path string) framework.Results {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	before := strings.Join(itemStrings(t, items), "---\n")
	conf, route, history, expect := fixtureConfig(t, r.FunctionConfig)
	results := Run(&Context{Model: app.BuildWith(items, app.CarrierOptions{SparkConf: conf, KubeflowRoute: route}), History: &history, Expect: expect})
	if after := strings.Join(itemStrings(t, items), "---\n"); after != before {
		t.Errorf("validation changed the items:\n%s", cmp.Diff(before, after))
	}
	return results
}

// fixtureConfig reads the fixture's functionConfig: a ConfigMap with mode: validate and
// nothing else but spark.* keys (spec.sparkConf in the ConfigMap form), kubeflowRoute,
// historyServerURL and historyRedirectorPort (the function passes its historyServer to the
// rules in either mode, so the fixtures are run with it too), and serviceEnabled: in validate
// mode the function tells the rules what transform would have added (SUI060), service.enabled
// true unless the config says otherwise, and so do the fixtures: a fixture of another rule that
// sparkui-fn never transformed reports SUI060 too, as the function would.
// Anything else would need the function's config loading, which the fixtures of the
// top-level testdata cover.
func fixtureConfig(t *testing.T, fc *yaml.RNode) (map[string]string, app.Route, sidecar.History, *Expect) {
	t.Helper()
	if fc == nil || fc.GetKind() != "ConfigMap" || fc.GetDataMap()["mode"] != "validate" {
		t.Fatalf("functionConfig must be a ConfigMap with data.mode: validate")
	}
	var conf map[string]string
	route := app.RouteTemplate
	history := sidecar.History{RedirectorPort: sidecar.DefaultRedirectorPort}
	expect := &Expect{UIService: true}
	for k, v := range fc.GetDataMap() {
		switch {
		case k == "mode":
		case k == "serviceEnabled":
			b, err := strconv.ParseBool(v)
			if err != nil {
				t.Fatalf("serviceEnabled %q: %v", v, err)
			}
			expect = &Expect{UIService: b}
		case k == "historyServerURL":
			history.URL = v
		case k == "historyRedirectorPort":
			p, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("historyRedirectorPort %q: %v", v, err)
			}
			history.RedirectorPort = p
		case k == "kubeflowRoute" && (v == "template" || v == "webhook"):
			if v == "webhook" {
				route = app.RouteWebhook
			}
		case strings.HasPrefix(k, "spark."):
			if conf == nil {
				conf = map[string]string{}
			}
			conf[k] = v
		default:
			t.Fatalf("functionConfig key %q: the rule fixtures take mode, serviceEnabled, kubeflowRoute, historyServerURL, historyRedirectorPort and spark.* keys only", k)
		}
	}
	return conf, route, history, expect
}

func itemStrings(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		s, err := it.String()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
