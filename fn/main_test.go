package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/" + name + "/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itemCount(t *testing.T, out []byte) int {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(out)}).Read()
	if err != nil {
		t.Fatalf("output is not a ResourceList: %v\n%s", err, out)
	}
	return len(items)
}

// TestExitAndStderr: errors make the binary exit 1 with one line per error on stderr (what
// kustomize shows), and every item is still written.
func TestExitAndStderr(t *testing.T) {
	for _, tc := range []struct {
		fixture  string
		code     int
		items    int
		stderrRE []string
	}{
		{"random-port-hostnetwork", 0, 6, nil},
		{"bad-config", 1, 3, []string{"spec.service.colour", "spec.service.port", "spec.service.type"}},
		{"bad-properties-escape", 1, 6, []string{"[SUI015]"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(nil, bytes.NewReader(readFixture(t, tc.fixture)), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if n := itemCount(t, stdout.Bytes()); n != tc.items {
				t.Errorf("%d items written, want %d", n, tc.items)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(tc.stderrRE) == 0 {
				if stderr.Len() != 0 {
					t.Errorf("stderr not empty:\n%s", stderr.String())
				}
				return
			}
			if len(lines) != len(tc.stderrRE) {
				t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(tc.stderrRE), stderr.String())
			}
			for i, want := range tc.stderrRE {
				if !strings.HasPrefix(lines[i], "sparkui-fn: [error] ") || !strings.Contains(lines[i], want) {
					t.Errorf("stderr line %d = %q, want an error line naming %q", i, lines[i], want)
				}
			}
		})
	}
}

// TestStandalone: `sparkui-fn CONFIG FILE...` prints the transformed items, unwrapped.
func TestStandalone(t *testing.T) {
	dir := t.TempDir()
	in, err := yaml.Parse(string(readFixture(t, "random-port")))
	if err != nil {
		t.Fatal(err)
	}
	items, _ := in.Pipe(yaml.Lookup("items"))
	elems, _ := items.Elements()
	var docs []string
	for _, e := range elems {
		docs = append(docs, e.MustString())
	}
	os.WriteFile(dir+"/in.yaml", []byte(strings.Join(docs, "---\n")), 0o600)
	os.WriteFile(dir+"/fn.yaml", []byte("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: x\nspec:\n  service:\n    type: NodePort\n"), 0o600)
	var stdout, stderr bytes.Buffer
	if code := run([]string{dir + "/fn.yaml", dir + "/in.yaml"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if strings.Contains(out, "kind: ResourceList") || !strings.Contains(out, "type: NodePort") || strings.Count(out, "\n---\n") != 5 {
		t.Errorf("standalone output:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	var stdout bytes.Buffer
	if run([]string{"--version"}, nil, &stdout, &stdout) != 0 || !strings.HasPrefix(stdout.String(), "sparkui-fn ") {
		t.Errorf("--version: %q", stdout.String())
	}
}

// TestValidateModeLeavesItems: validate mode writes the items exactly as a function that does
// nothing would, on every fixture, and only adds results.
func TestValidateModeLeavesItems(t *testing.T) {
	for _, in := range fixtures(t) {
		t.Run(in, func(t *testing.T) {
			src, _ := os.ReadFile(in)
			rl, err := yaml.Parse(string(src))
			if err != nil {
				t.Fatal(err)
			}
			rl.SetMapField(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {mode: validate}"), "functionConfig")
			withValidate := []byte(rl.MustString())
			noop := runNoop(t, withValidate)
			got := runProcessor(t, withValidate)
			if i := bytes.Index(got, []byte("\nresults:\n")); i >= 0 {
				got = got[:i+1]
			}
			if string(got) != string(noop) {
				t.Errorf("validate mode changed items:\n%s\nvs no-op:\n%s", got, noop)
			}
		})
	}
}

// TestStandaloneFirstFileIsNotAConfig: `sparkui-fn manifests.yaml` says that the first file is
// read as the configuration, what it holds instead, and the two ways to call the function;
// nothing on stdout, exit 1.
func TestStandaloneFirstFileIsNotAConfig(t *testing.T) {
	dir := t.TempDir()
	manifests := dir + "/manifests.yaml"
	os.WriteFile(manifests, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: d, labels: {spark-role: driver}}\n"), 0o600)
	twoConfigs := dir + "/two.yaml"
	os.WriteFile(twoConfigs, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"), 0o600)
	values := dir + "/values.yaml"
	os.WriteFile(values, []byte("replicaCount: 1\n"), 0o600)
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{manifests}, "it holds a v1 Pod"},
		{[]string{manifests, dir + "/other.yaml"}, "it holds a v1 Pod"},
		{[]string{twoConfigs, manifests}, "it holds 2 documents, and a functionConfig is one"},
		{[]string{values, manifests}, "it holds no Kubernetes object"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &stdout, &stderr)
		want := "sparkui-fn: " + tc.args[0] + " is the first file, which sparkui-fn reads as its functionConfig (the configuration), but " + tc.what + ".\n" +
			"  Give the configuration first, then the manifests:  sparkui-fn CONFIG.yaml " + tc.args[0] + "\n" +
			"  or, for the default configuration, pipe the manifests:  sparkui-fn < " + tc.args[0] + "\n" +
			"  A configuration is a sparkui.dev/v1alpha1 SparkUIService, or a v1 ConfigMap (docs/configuration.md)\n"
		if code != 1 || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", tc.args, code, stdout.String(), stderr.String(), want)
		}
	}
}

// TestStandaloneMissingConfig: a first file that cannot be read is named as the configuration.
func TestStandaloneMissingConfig(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"nope.yaml", "m.yaml"}, strings.NewReader(""), &stdout, &stderr)
	want := "sparkui-fn: cannot read the functionConfig (the first file of sparkui-fn CONFIG.yaml FILE...): open nope.yaml: no such file or directory\n"
	if code != 1 || stdout.Len() != 0 || stderr.String() != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout.String(), stderr.String(), want)
	}
}

// TestConfigShapeFailsTheRun: through the binary, a ConfigMap functionConfig whose data is a
// list, and a runtime image with a newline, fail the run (exit 1, the field on stderr) where
// they used to give every default, or the newline in every driver Pod, and exit 0.
func TestConfigShapeFailsTheRun(t *testing.T) {
	for _, tc := range []struct{ fc, field string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: [serviceType=NodePort]\n", " data: [SUI014]"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {runtimeImage: \"ghcr.io/x/y:1\\n--evil\"}\n", " data.runtimeImage: [SUI014]"},
	} {
		in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItems([]string{string(readKubeflowApp(t))}) +
			"functionConfig:\n" + indentBlock(tc.fc, "  ")
		var stdout, stderr bytes.Buffer
		code := run(nil, strings.NewReader(in), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), tc.field) {
			t.Errorf("%s: exit %d, stderr:\n%s", tc.fc, code, stderr.String())
		}
		items, _, ok := strings.Cut(stdout.String(), "\nfunctionConfig:\n")
		if !ok || strings.Contains(items, "--evil") || strings.Contains(items, "sparkui-runtime") {
			t.Errorf("the items were rewritten with a bad config:\n%s", stdout.String())
		}
	}
}

func readKubeflowApp(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/assets/carriers/kubeflow-sparkapplication.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func indentBlock(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return by + strings.Join(lines, "\n"+by) + "\n"
}
