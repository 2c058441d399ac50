package function

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed sparkuiservice.schema.json
var schemaJSON []byte

// The functionConfig is checked against sparkuiservice.schema.json by this small interpreter of
// the keywords that schema uses, not by a JSON Schema library: the library used before
// (santhosh-tekuri/jsonschema/v5) compiles every draft's metaschema in its package init, about
// 4 ms of each run of the function, config or not. Its messages are kept word for word;
// schema_test.go checks both agree on the schema and on bad configs, and that the schema uses
// no keyword this file does not know.

// schemaError is one failed keyword: where in the config (a JSON pointer) and why.
type schemaError struct {
	InstanceLocation string
	Message          string
}

// knownKeywords are the keywords checkValue understands; annotations are ignored.
var knownKeywords = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "default": true,
	"type": true, "required": true, "additionalProperties": true, "properties": true,
	"const": true, "enum": true, "minimum": true, "maximum": true, "minLength": true,
	"items": true, "maxItems": true,
}

var parsedSchema = sync.OnceValue(func() map[string]any {
	var s map[string]any
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		panic(err)
	}
	return s
})

// validateSchema lists every violation of the schema by v (a value as encoding/json decodes
// it, or with int and bool leaves as the ConfigMap form builds it).
func validateSchema(v any) []schemaError {
	var out []schemaError
	checkValue(parsedSchema(), v, "", &out)
	return out
}

func checkValue(s map[string]any, v any, loc string, out *[]schemaError) {
	fail := func(format string, args ...any) {
		*out = append(*out, schemaError{loc, fmt.Sprintf(format, args...)})
	}
	if t, ok := s["type"]; ok {
		types := typeList(t)
		if !typeMatches(types, v) {
			fail("expected %s, but got %s", strings.Join(types, " or "), jsonType(v))
			return
		}
	}
	if c, ok := s["const"]; ok && !jsonEqual(v, c) {
		fail("value must be %#v", c)
	}
	if e, ok := s["enum"].([]any); ok {
		matched := false
		for _, item := range e {
			matched = matched || jsonEqual(v, item)
		}
		if !matched {
			strs := make([]string, len(e))
			for i, item := range e {
				strs[i] = fmt.Sprintf("%#v", item)
			}
			if len(e) == 1 {
				fail("value must be %s", strs[0])
			} else {
				fail("value must be one of %s", strings.Join(strs, ", "))
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if req, ok := s["required"].([]any); ok {
			var missing []string
			for _, r := range req {
				if _, ok := v[r.(string)]; !ok {
					missing = append(missing, quote(r.(string)))
				}
			}
			if len(missing) > 0 {
				fail("missing properties: %s", strings.Join(missing, ", "))
			}
		}
		props, _ := s["properties"].(map[string]any)
		var extra []string
		for _, name := range sortedKeys(v) {
			if ps, ok := props[name].(map[string]any); ok {
				checkValue(ps, v[name], loc+"/"+escapeToken(name), out)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					extra = append(extra, quote(name))
				}
			case map[string]any:
				checkValue(ap, v[name], loc+"/"+escapeToken(name), out)
			}
		}
		if len(extra) > 0 {
			fail("additionalProperties %s not allowed", strings.Join(extra, ", "))
		}
	case []any:
		if m, ok := s["maxItems"].(float64); ok && len(v) > int(m) {
			fail("maximum %d items required, but found %d items", int(m), len(v))
		}
		if is, ok := s["items"].(map[string]any); ok {
			for i, item := range v {
				checkValue(is, item, loc+"/"+fmt.Sprint(i), out)
			}
		}
	case string:
		if m, ok := s["minLength"].(float64); ok && utf8.RuneCountInString(v) < int(m) {
			fail("length must be >= %d, but got %d", int(m), utf8.RuneCountInString(v))
		}
	default:
		n, ok := number(v)
		if !ok {
			break
		}
		if m, ok := s["minimum"].(float64); ok && n.Cmp(rat(m)) < 0 {
			fail("must be >= %v but found %v", m, v)
		}
		if m, ok := s["maximum"].(float64); ok && n.Cmp(rat(m)) > 0 {
			fail("must be <= %v but found %v", m, v)
		}
	}
}

func typeList(t any) []string {
	if s, ok := t.(string); ok {
		return []string{s}
	}
	var out []string
	for _, x := range t.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func typeMatches(types []string, v any) bool {
	vt := jsonType(v)
	for _, t := range types {
		if t == vt {
			return true
		}
		if t == "integer" && vt == "number" {
			if n, ok := number(v); ok && n.IsInt() {
				return true
			}
		}
	}
	return false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, int:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func number(v any) (*big.Rat, bool) {
	switch n := v.(type) {
	case float64:
		return new(big.Rat).SetString(fmt.Sprint(n))
	case int:
		return new(big.Rat).SetInt64(int64(n)), true
	}
	return nil, false
}

func rat(f float64) *big.Rat { r, _ := new(big.Rat).SetString(fmt.Sprint(f)); return r }

// jsonEqual compares the scalars the schema's const and enum hold (strings, numbers, booleans).
func jsonEqual(a, b any) bool {
	if jsonType(a) != jsonType(b) {
		return false
	}
	if na, ok := number(a); ok {
		nb, _ := number(b)
		return na.Cmp(nb) == 0
	}
	return a == b
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// quote is how the messages quote property names: 'name'.
func quote(s string) string {
	s = fmt.Sprintf("%q", s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}
