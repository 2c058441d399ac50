package main

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestListResultsOnStderr: a v1 List comes back a v1 List with apiVersion, kind and items only
// (no ResourceList `results` field, which strict schema checks of a List refuse), and every
// result, warnings included, goes to stderr with the exit status unchanged; a plain stream
// the same; a ResourceList keeps its results field.
func TestListResultsOnStderr(t *testing.T) {
	app := string(readKubeflowApp(t))
	const warning = "sparkui-fn: [warning] sparkoperator.k8s.io/v1beta2/SparkApplication/analytics/pi-estimate: [SUI032] "
	const notObject = "sparkui-fn: [error] "
	list := "apiVersion: v1\nkind: List\nitems:\n" + indentItems([]string{app})
	for _, tc := range []struct {
		name, in   string
		code       int
		fields     []string // top-level fields of the output
		stderrHas  []string
		stderrNot  string
		itemsCount int
	}{
		{"List", list, 0, []string{"apiVersion", "kind", "items"}, []string{warning}, "", 4},
		{"List with an error", list + "- {hello: world}\n", 1, []string{"apiVersion", "kind", "items"}, []string{warning, notObject + "apiVersion: [SUI030] object 2 of the input is not a Kubernetes object"}, "", 5},
		{"ResourceList", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItems([]string{app}), 0,
			[]string{"apiVersion", "kind", "items", "results"}, nil, "[SUI032]", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(nil, strings.NewReader(tc.in), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			out, err := yaml.Parse(stdout.String())
			if err != nil {
				t.Fatalf("output: %v\n%s", err, stdout.String())
			}
			fields, _ := out.Fields()
			if strings.Join(fields, " ") != strings.Join(tc.fields, " ") {
				t.Errorf("top-level fields %v, want %v:\n%s", fields, tc.fields, stdout.String())
			}
			if items, _ := out.Pipe(yaml.Lookup("items")); items == nil || len(items.Content()) != tc.itemsCount {
				t.Errorf("want %d items:\n%s", tc.itemsCount, stdout.String())
			}
			for _, want := range tc.stderrHas {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if tc.stderrNot != "" && strings.Contains(stderr.String(), tc.stderrNot) {
				t.Errorf("stderr has %q (it is in the results field):\n%s", tc.stderrNot, stderr.String())
			}
		})
	}
	// A plain stream has no results field either: its warnings go to stderr.
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(app), &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), warning) || strings.Contains(stdout.String(), "results:") {
		t.Errorf("plain stream: exit %d, stderr:\n%s", code, stderr.String())
	}
}
