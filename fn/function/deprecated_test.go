package function

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDeprecationsComplete: Deprecations is every deprecated field the function reads, as the
// schema marks them ("deprecated": true), the ConfigMap keys read for them, and the rows of
// docs/configuration.md that say "deprecated"; each entry is read with a warning to the same
// configuration as its new spelling, in both forms.
func TestDeprecationsComplete(t *testing.T) {
	var fromSchema []string
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		if d, _ := s["deprecated"].(bool); d {
			fromSchema = append(fromSchema, path)
		}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				walk(m, strings.TrimPrefix(path+"."+k, "."))
			}
		}
	}
	walk(parsedSchema(), "")
	var listed, listedFlat []string
	for _, d := range Deprecations {
		listed = append(listed, d.Old)
		if d.OldFlat != "" {
			listedFlat = append(listedFlat, d.OldFlat)
			if got := strings.Join(configMapKeys[d.OldFlat], "."); got != d.Old {
				t.Errorf("ConfigMap key %s is read as %s, want %s", d.OldFlat, got, d.Old)
			}
			if got := strings.Join(configMapKeys[d.NewFlat], "."); got != d.New {
				t.Errorf("ConfigMap key %s is read as %s, want %s", d.NewFlat, got, d.New)
			}
		}
	}
	var flat []string
	for k := range deprecatedKeys {
		flat = append(flat, k)
	}
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|[^\\n]*\\| deprecated").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	for what, got := range map[string][]string{"schema": fromSchema, "docs/configuration.md": documented} {
		if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(listed))) {
			t.Errorf("deprecated fields in the %s: %v; Deprecations lists %v", what, got, listed)
		}
	}
	if slices.Sort(flat); !slices.Equal(flat, slices.Sorted(slices.Values(listedFlat))) {
		t.Errorf("deprecated ConfigMap keys %v; Deprecations lists %v", flat, listedFlat)
	}

	for _, d := range Deprecations {
		for _, f := range d.Configs() {
			oldCfg, res := LoadConfig(yaml.MustParse(f[0]))
			newCfg, newRes := LoadConfig(yaml.MustParse(f[1]))
			if len(newRes) != 0 || len(res) != 1 || HasError(res) || !strings.Contains(res[0].Message, "deprecated functionConfig field") {
				t.Errorf("%q: results %v (the new spelling: %v), want one deprecation warning", f[0], res, newRes)
			}
			if len(ConfigRefusals(res)) != 0 {
				t.Errorf("%q: ConfigRefusals refuses a deprecation: %v", f[0], ConfigRefusals(res))
			}
			if reflect.DeepEqual(newCfg, defaults()) {
				t.Errorf("%q: Value %q is the default, so no test could see whether the old spelling is read", f[1], d.Value)
			}
			if !reflect.DeepEqual(oldCfg, newCfg) {
				t.Errorf("%q reads as %+v, its new spelling as %+v", f[0], oldCfg, newCfg)
			}
		}
	}
}
