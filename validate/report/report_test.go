package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// UPDATE_GOLDEN=1 go test ./validate/report rewrites testdata/sample.*; review the diff.
var update = os.Getenv("UPDATE_GOLDEN") == "1"

// sample is a report with every shape of finding: an error, a warning and an info on objects
// of two files (one absolute), a multi-line message, one finding on no object (a bad
// functionConfig), one of a rule raised outside the model (no case per object in JUnit), one
// of a rule missing from the catalog (no ruleIndex in SARIF), and an object nothing was found
// on. The catalog is fixed here, so the
// golden files change only when a format does, not when a rule's text does.
func sample() *Report {
	pod := &Object{File: "manifests/app.yaml", Index: 0, Line: 2, Kind: "Pod", Namespace: "etl", Name: "job-driver"}
	svc := &Object{File: "manifests/app.yaml", Index: 1, Line: 30, Kind: "Service", Namespace: "etl", Name: "job-driver-svc"}
	cm := &Object{File: "/abs/conf.yaml", Index: 0, Line: 1, Kind: "ConfigMap", Name: "conf"}
	res := func(rule string, sev framework.Severity, o *Object, field, msg string) *framework.Result {
		r := &framework.Result{Message: "[" + rule + "] " + msg, Severity: sev, Tags: map[string]string{"rule": rule}}
		if o != nil {
			r.ResourceRef = &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "v1", Kind: o.Kind},
				NameMeta: yaml.NameMeta{Name: o.Name, Namespace: o.Namespace}}
		}
		if field != "" {
			r.Field = &framework.Field{Path: field}
		}
		return r
	}
	return &Report{
		Files:   []string{"manifests/app.yaml", "/abs/conf.yaml"},
		Objects: []*Object{pod, svc, cm},
		Findings: []*Finding{
			{Result: res("SUI001", framework.Error, pod, "spec.containers[0].ports[2].containerPort", "containerPort 0\n  is rejected"),
				Rule: "SUI001", Object: pod, File: pod.File, Line: 14, RuleIndex: 0},
			{Result: res("SUI011", framework.Warning, pod, "spec.hostNetwork", "hostNetwork with ports"),
				Rule: "SUI011", Object: pod, File: pod.File, Line: 9, RuleIndex: 1},
			{Result: res("SUI001", framework.Info, svc, "", "noted"),
				Rule: "SUI001", Object: svc, File: svc.File, Line: 30, RuleIndex: 0},
			{Result: res("SUI014", framework.Error, nil, `data["spark.ui.port"]`, "bad value"),
				Rule: "SUI014", RuleIndex: 2},
			{Result: res("SUI020", framework.Error, svc, "spec.ports[0].port", "key defined twice"),
				Rule: "SUI020", Object: svc, File: svc.File, Line: 33, RuleIndex: 3},
			{Result: res("SUI999", framework.Warning, cm, "", "a rule the catalog does not list"),
				Rule: "SUI999", Object: cm, File: cm.File, Line: 1, RuleIndex: -1},
		},
		Rules: []Rule{
			{ID: "SUI001", Name: "ZeroContainerPort", Severity: framework.Error, Title: "a driver container declares containerPort: 0",
				Catches: "a zero port.", Why: "the API server rejects it.", Fix: "drop it.", HelpURI: "https://example.test/rules#sui001", Checked: true},
			{ID: "SUI011", Name: "HostNetworkPorts", Severity: framework.Warning, Title: "hostNetwork: true with declared containerPorts",
				Catches: "ports under hostNetwork.", Why: "they become hostPorts.", Fix: "drop them.", HelpURI: "https://example.test/rules#sui011", Checked: true},
			{ID: "SUI014", Name: "InvalidConfig", Severity: framework.Error, Title: "invalid functionConfig",
				Catches: "a bad config.", Why: "nothing can run.", Fix: "fix it.", HelpURI: "https://example.test/rules#sui014"},
			{ID: "SUI020", Name: "DuplicateKey", Severity: framework.Error, Title: "a mapping key is defined twice in an object",
				Catches: "a key twice.", Why: "kubectl refuses it.", Fix: "keep one.", HelpURI: "https://example.test/rules#sui020"},
		},
		ToolVersion: "1.2.3",
	}
}

// golden compares a format's output on sample() with testdata/sample.<ext>.
func golden(t *testing.T, write func(io.Writer, *Report) error, ext string) {
	t.Helper()
	var got bytes.Buffer
	if err := write(&got, sample()); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join("testdata", "sample."+ext)
	if update {
		if err := os.WriteFile(p, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got.String()); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", p, d)
	}
}

func TestSummary(t *testing.T) {
	if got, want := sample().Summary(), "3 errors, 2 warnings, 1 info in 3 objects from 2 files"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	one := &Report{Files: []string{"a"}, Objects: []*Object{{}}}
	if got, want := one.Summary(), "0 errors, 0 warnings, 0 info in 1 object from 1 file"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

func TestObjectID(t *testing.T) {
	for _, tc := range []struct {
		o    Object
		want string
	}{
		{Object{Kind: "Pod", Namespace: "ns", Name: "p"}, "Pod/ns/p"},
		{Object{Kind: "Pod", Name: "p"}, "Pod/p"},
		{Object{Index: 3}, "document 3"},
	} {
		if got := tc.o.ID(); got != tc.want {
			t.Errorf("ID() = %q, want %q", got, tc.want)
		}
	}
}

// TestFormatsListed: --output accepts exactly the formats that have a writer.
func TestFormatsListed(t *testing.T) {
	var names []string
	for n := range Formats {
		names = append(names, n)
	}
	if len(names) != 4 || Formats["text"] == nil || Formats["json"] == nil || Formats["sarif"] == nil || Formats["junit"] == nil {
		t.Errorf("formats: %v", names)
	}
}

// TestCatalog: the catalog the command uses is validate's, every rule with its help page.
func TestCatalog(t *testing.T) {
	rules := Catalog()
	if len(rules) == 0 {
		t.Fatal("empty catalog")
	}
	for i, r := range rules {
		if r.ID == "" || r.Title == "" || r.Catches == "" || r.HelpURI == "" || r.Severity == "" {
			t.Errorf("rule %d incomplete: %+v", i, r)
		}
		if i > 0 && rules[i-1].ID >= r.ID {
			t.Errorf("catalog not in ID order at %s", r.ID)
		}
	}
}
