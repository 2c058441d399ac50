package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPlainStreamAddsNoAnnotation: `kustomize build … | sparkui-fn` gets back the objects
// without kyaml's reader annotations; an object that carried one itself keeps its own value,
// and objects the function has no rule for come back byte for byte.
func TestPlainStreamAddsNoAnnotation(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # mine\ndata:\n  k: v\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    config.kubernetes.io/index: \"7\"\nspec:\n  ports:\n  - port: 80\n"
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if d := cmp.Diff(in, stdout.String()); d != "" {
		t.Errorf("plain stream changed (-in +out):\n%s", d)
	}
}

// TestPlainStreamTransforms: an application as a plain stream is rewritten exactly as in
// standalone mode (which never keeps reader annotations), and the output is a fixed point.
func TestPlainStreamTransforms(t *testing.T) {
	in, err := os.ReadFile("../examples/spark-submit/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var plain, stderr bytes.Buffer
	if code := run(nil, bytes.NewReader(in), &plain, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	cfg := filepath.Join(t.TempDir(), "fn.yaml")
	os.WriteFile(cfg, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"), 0o600)
	var standalone bytes.Buffer
	if code := run([]string{cfg, "../examples/spark-submit/manifests.yaml"}, nil, &standalone, &stderr); code != 0 {
		t.Fatalf("standalone: exit %d: %s", code, stderr.String())
	}
	if d := cmp.Diff(standalone.String(), plain.String()); d != "" {
		t.Errorf("plain stream differs from standalone (-standalone +plain):\n%s", d)
	}
	if strings.Contains(plain.String(), "kubernetes.io/index") || !strings.Contains(plain.String(), "-ui-svc") {
		t.Errorf("plain output:\n%s", plain.String())
	}
	var again bytes.Buffer
	if code := run(nil, bytes.NewReader(plain.Bytes()), &again, &stderr); code != 0 || again.String() != plain.String() {
		t.Errorf("second run: exit %d, changed: %s", code, cmp.Diff(plain.String(), again.String()))
	}
}

// TestNotAnObject: a document that is not a Kubernetes object is an error result naming the
// document and what it lacks (SUI030, as in a ResourceList and in sparkui-fn validate); it is
// written back as it came, with the other objects.
// keepOut is how SUI030 says what to do with a document that is not a manifest.
const keepOut = "If it is not a manifest (Helm values, a tool's settings), keep it out of the input: out of the directory given to sparkui-fn validate, or out of the kustomization's resources"

func TestNotAnObject(t *testing.T) {
	for _, tc := range []struct{ in, stderr string }{
		{"hello: world\n", "sparkui-fn: [error] apiVersion: [SUI030] object 1 of the input is not a Kubernetes object: it has no apiVersion and no kind; kubectl refuses it, sparkui leaves it as it is. " + keepOut + "\n"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\ndata: {}\n",
			"sparkui-fn: [error] v1 kind: [SUI030] object 2 of the input is not a Kubernetes object: it has no kind; kubectl refuses it, sparkui leaves it as it is. " + keepOut + "\n"},
		{"kind: Pod\nmetadata: {name: p}\n", "sparkui-fn: [error] Pod/p apiVersion: [SUI030] Pod p is not a Kubernetes object: it has no apiVersion; kubectl refuses it, sparkui leaves it as it is. " + keepOut + "\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(nil, strings.NewReader(tc.in), &stdout, &stderr)
		if code != 1 || stdout.String() != tc.in || stderr.String() != tc.stderr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1, the input and %q", tc.in, code, stdout.String(), stderr.String(), tc.stderr)
		}
	}
}

// TestDuplicateKeys: a key defined twice is an error naming the object and the key's field
// path, from the function on a plain stream (objects written back unchanged) and from
// `sparkui-fn validate` (at the key's line).
func TestDuplicateKeys(t *testing.T) {
	in := "apiVersion: v1\nkind: Pod\nkind: Service\nmetadata:\n  name: x\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: n\nspec:\n  ports:\n  - port: 80\n    port: 0\n"
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(in), &stdout, &stderr); code != 1 {
		t.Errorf("function: exit %d, want 1", code)
	}
	if stdout.String() != in {
		t.Errorf("function changed the objects:\n%s", cmp.Diff(in, stdout.String()))
	}
	wantStderr := `sparkui-fn: [error] v1/Pod/x kind: [SUI021] Pod x: key "kind" is defined twice in one mapping: kubectl refuses the object ("mapping key already defined"); keep one
sparkui-fn: [error] v1/Service/n/s spec.ports[0].port: [SUI021] Service n/s: key "port" is defined twice in one mapping: kubectl refuses the object ("mapping key already defined"); keep one
`
	if d := cmp.Diff(wantStderr, stderr.String()); d != "" {
		t.Errorf("function stderr (-want +got):\n%s", d)
	}

	code, out, _ := runCmd(t, in, "-", "--output", "json")
	if code != 1 {
		t.Errorf("validate: exit %d, want 1", code)
	}
	var rep jsonOut
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Results {
		got = append(got, strings.Join([]string{r.Rule, r.Severity, r.ResourceRef.Kind, r.ResourceRef.Name, r.Field.Path, r.File.Path, itoa(r.File.Line)}, " "))
	}
	want := []string{"SUI021 error Pod x kind stdin 2", "SUI021 error Service s spec.ports[0].port stdin 14"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("validate findings (-want +got):\n%s", d)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
