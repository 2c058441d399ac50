package function

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigDocMatchesSchema keeps docs/configuration.md's field table equal to the schema:
// every leaf field, its ConfigMap key, default and allowed values.
func TestConfigDocMatchesSchema(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		t.Fatal(err)
	}
	fromSchema := map[string]string{}
	var walk func(prefix string, node map[string]any)
	walk = func(prefix string, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		for name, v := range props {
			p := v.(map[string]any)
			path := prefix + "." + name
			if _, nested := p["properties"]; nested {
				walk(path, p)
				continue
			}
			var allowed []string
			enum, _ := p["enum"].([]any)
			if p["type"] == "boolean" {
				enum = []any{true, false}
			}
			for _, e := range enum {
				allowed = append(allowed, fmt.Sprintf("`%v`", e))
			}
			def := ""
			if d, ok := p["default"]; ok {
				def = fmt.Sprintf("`%v`", d)
				if _, isMap := d.(map[string]any); isMap {
					def = "`{}`"
				}
			}
			fromSchema[path] = strings.Join(allowed, ", ") + "|" + def
		}
	}
	walk("spec", s["properties"].(map[string]any)["spec"].(map[string]any))

	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(spec\\.[a-zA-Z.]+)` \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\|$")
	fromDoc := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		path, key, def, allowed := m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[4]), strings.TrimSpace(m[5])
		if want := "`" + docKey(path) + "`"; key != want && path != "spec.sparkConf" {
			t.Errorf("%s: ConfigMap key %s, code says %s", path, key, want)
		}
		if !strings.HasPrefix(allowed, "`") || strings.Contains(allowed, "–") {
			allowed = "" // free-form values: only enums are compared
		}
		if !strings.HasPrefix(def, "`") {
			def = "" // prose default
		}
		fromDoc[path] = allowed + "|" + def
	}
	if d := cmp.Diff(fromSchema, fromDoc); d != "" {
		t.Errorf("docs/configuration.md differs from the schema (-schema +doc):\n%s", d)
	}
}

// docKey is the ConfigMap key of a leaf field: its own, or that of the object it is part of
// (authBearerSecret=<name>/<key> sets both leaves of spec.runtime.auth.bearerTokenSecret).
func docKey(path string) string {
	for k, p := range configMapKeys {
		if pp := "spec." + strings.Join(p[1:], "."); pp == path || strings.HasPrefix(path, pp+".") {
			return k
		}
	}
	return ""
}
