package function

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// reference is the schema compiled by the JSON Schema library the function used before: the
// interpreter in schema.go must say what it says.
func reference(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("s.json", bytes.NewReader(schemaJSON)); err != nil {
		t.Fatal(err)
	}
	return c.MustCompile("s.json")
}

func referenceErrors(t *testing.T, s *jsonschema.Schema, v any) []schemaError {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var out []schemaError
	var walk func(*jsonschema.ValidationError)
	walk = func(ve *jsonschema.ValidationError) {
		if len(ve.Causes) == 0 {
			// The library URL-escapes pointer tokens ("a b" reads a%20b); the interpreter
			// does not, so that a key reads as written.
			loc, _ := url.PathUnescape(ve.InstanceLocation)
			out = append(out, schemaError{loc, ve.Message})
		}
		for _, c := range ve.Causes {
			walk(c)
		}
	}
	walk(err.(*jsonschema.ValidationError))
	return out
}

func sortErrs(es []schemaError) []schemaError {
	sort.Slice(es, func(i, j int) bool {
		if es[i].InstanceLocation != es[j].InstanceLocation {
			return es[i].InstanceLocation < es[j].InstanceLocation
		}
		return es[i].Message < es[j].Message
	})
	return es
}

// TestSchemaAgreesWithLibrary: on valid and invalid configs (one fault each where the library
// lists several in random order) both find the same faults with the same words.
func TestSchemaAgreesWithLibrary(t *testing.T) {
	ref := reference(t)
	const head = `"apiVersion": "sparkui.dev/v1alpha1", "kind": "SparkUIService"`
	for _, doc := range []string{
		`{` + head + `}`,
		`{` + head + `, "spec": {"route": {"kind": "HTTPRoute", "parentRefs": [{"name": "gw"}, {"name": ""}, {"nam": "x"}, "s"], "grpc": 1, "tls": {"secretName": 3}}}}`,
		`{` + head + `, "spec": {"route": {"kind": "Gateway", "hostname": "", "pathPrefix": "", "ingressClassName": 2}}}`,
		`{` + head + `, "metadata": {"name": "x"}, "spec": {"mode": "validate", "service": {"enabled": false, "type": "NodePort", "port": 4040, "externalURI": "nodePort"}, "runtime": {"image": "r:1"}, "rbac": {"create": false}, "sparkConf": {"spark.ui.port": 0, "a": "b", "c": true}}}`,
		`{}`,
		`{"kind": "SparkUIService"}`,
		`{"apiVersion": "sparkui.dev/v1", "kind": "SparkUIService"}`,
		`{"apiVersion": "sparkui.dev/v1alpha1", "kind": "Other"}`,
		`{` + head + `, "extra": 1}`,
		`{` + head + `, "metadata": 3}`,
		`{` + head + `, "spec": []}`,
		`{` + head + `, "spec": {"mode": "fix"}}`,
		`{` + head + `, "spec": {"mode": 5}}`,
		`{` + head + `, "spec": {"colour": "red"}}`,
		`{` + head + `, "spec": {"service": {"type": "ExternalName"}}}`,
		`{` + head + `, "spec": {"service": {"port": 70000}}}`,
		`{` + head + `, "spec": {"service": {"port": -1}}}`,
		`{` + head + `, "spec": {"service": {"port": 80.5}}}`,
		`{` + head + `, "spec": {"service": {"port": 1e6}}}`,
		`{` + head + `, "spec": {"service": {"port": "80"}}}`,
		`{` + head + `, "spec": {"service": {"port": 80.0}}}`,
		`{` + head + `, "spec": {"service": {"enabled": "yes"}}}`,
		`{` + head + `, "spec": {"service": {"externalURI": null}}}`,
		`{` + head + `, "spec": {"service": null}}`,
		`{` + head + `, "spec": {"runtime": {"image": ""}}}`,
		`{` + head + `, "spec": {"runtime": {"image": 3}}}`,
		`{` + head + `, "spec": {"rbac": {"create": 1}}}`,
		`{` + head + `, "spec": {"sparkConf": {"spark.x": {"a": 1}}}}`,
		`{` + head + `, "spec": {"sparkConf": {"a b/c~d": []}}}`,
		`{` + head + `, "spec": {"sparkConf": "x"}}`,
		`{` + head + `, "spec": {"kubeflow": {"route": "webhook"}}}`,
		`{` + head + `, "spec": {"kubeflow": {"route": "Webhook"}}}`,
		`{` + head + `, "spec": {"kubeflow": {"route": "template", "version": 2}}}`,
		`{` + head + `, "spec": {"kubeflow": "template"}}`,
		`{` + head + `, "spec": {"mode": "fix", "service": {"type": "x", "port": 99999, "colour": 1}, "rbac": {"create": "no"}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"bearerTokenSecret": {"name": "jws", "key": "token"}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"headerSecret": {"name": "h", "key": "header"}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"bearerTokenSecret": {"name": "jws"}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"bearerTokenSecret": {}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"headerSecret": {"name": "", "key": "k"}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"headerSecret": {"name": "h", "key": 1}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"basicSecret": {"name": "h", "key": "k"}}}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": "jws/token"}}}`,
		`{` + head + `, "spec": {"runtime": {"auth": {"bearerTokenSecret": {"name": "a", "key": "b", "optional": true}}}}}`,
		`{` + head + `, "spec": {"route": {"kind": "HTTPRoute", "parentRefs": [` + strings.TrimSuffix(strings.Repeat(`{"name": "gw"}, `, 33), ", ") + `]}}}`,
		`{` + head + `, "spec": {"route": {"kind": "HTTPRoute", "parentRefs": [` + strings.TrimSuffix(strings.Repeat(`{"name": "gw"}, `, 32), ", ") + `]}}}`,
		`{"apiVersion": 1, "kind": ["SparkUIService"]}`,
		`[]`,
		`"text"`,
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		want, got := sortErrs(referenceErrors(t, ref, v)), sortErrs(validateSchema(v))
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-library +interpreter):\n%s", doc, d)
		}
	}
	// The ConfigMap form's leaves are ints and bools, not float64.
	v := map[string]any{"apiVersion": "sparkui.dev/v1alpha1", "kind": "SparkUIService",
		"spec": map[string]any{"service": map[string]any{"port": 70000, "enabled": true}}}
	if d := cmp.Diff(sortErrs(referenceErrors(t, ref, v)), sortErrs(validateSchema(v))); d != "" {
		t.Errorf("ConfigMap form (-library +interpreter):\n%s", d)
	}
}

// TestSchemaUnknownFieldsSorted: several unknown fields are named in one message, sorted (the
// library named them in map order).
func TestSchemaUnknownFieldsSorted(t *testing.T) {
	v := map[string]any{"apiVersion": "sparkui.dev/v1alpha1", "kind": "SparkUIService",
		"spec": map[string]any{"zeta": 1, "alpha": 2, "it's": 3}}
	want := []schemaError{{"/spec", `additionalProperties 'alpha', 'it\'s', 'zeta' not allowed`}}
	if d := cmp.Diff(want, validateSchema(v)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestSchemaKeywordsKnown: the schema uses no keyword the interpreter would ignore, so an
// edit to the schema cannot silently stop being enforced.
func TestSchemaKeywordsKnown(t *testing.T) {
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		for k, v := range s {
			if !knownKeywords[k] {
				t.Errorf("%s: keyword %q is not implemented by schema.go", path, k)
			}
			switch k {
			case "properties":
				for name, p := range v.(map[string]any) {
					walk(path+"/properties/"+name, p.(map[string]any))
				}
			case "additionalProperties":
				if m, ok := v.(map[string]any); ok {
					walk(path+"/additionalProperties", m)
				}
			case "items":
				walk(path+"/items", v.(map[string]any))
			}
		}
	}
	walk("#", parsedSchema())
	if !strings.Contains(string(schemaJSON), `"additionalProperties": false`) {
		t.Error("schema lost additionalProperties: false")
	}
}
