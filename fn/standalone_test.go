package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// TestStandaloneAsKyaml: standalone mode (`sparkui-fn CONFIG FILE… [-]`), now written one
// document at a time, writes what kyaml's standalone command writes, byte for byte, with the same
// exit status, on every fixture split into a config file and a plain stream (files, and
// stdin first as kyaml reads it). Its results, which kyaml's plain output drops, go to stderr.
func TestStandaloneAsKyaml(t *testing.T) {
	fixtures, _ := filepath.Glob("../testdata/*/input.yaml")
	if len(fixtures) < 25 {
		t.Fatalf("only %d fixtures", len(fixtures))
	}
	dir := t.TempDir()
	compared := 0
	for _, fx := range fixtures {
		rl, err := yaml.ReadFile(fx)
		if err != nil {
			t.Fatal(err)
		}
		fc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
		if f := rl.Field("functionConfig"); f != nil {
			fc = f.Value.MustString()
		}
		items := rl.Field("items")
		if items == nil || len(items.Value.Content()) < 2 {
			continue
		}
		var a, b bytes.Buffer
		for i, it := range items.Value.Content() {
			doc := yaml.NewRNode(it).MustString()
			if i%2 == 0 {
				a.WriteString("---\n" + doc)
			} else {
				b.WriteString("---\n" + doc)
			}
		}
		name := filepath.Base(filepath.Dir(fx))
		cfgFile, fileA, fileB := filepath.Join(dir, name+"-fn.yaml"), filepath.Join(dir, name+"-a.yaml"), filepath.Join(dir, name+"-b.yaml")
		os.WriteFile(cfgFile, []byte(fc), 0o600)
		os.WriteFile(fileA, a.Bytes(), 0o600)
		os.WriteFile(fileB, b.Bytes(), 0o600)
		for _, args := range [][]string{{cfgFile, fileA, fileB}, {cfgFile, fileB, "-"}} {
			wantOut, wantCode := kyamlStandalone(t, args, a.Bytes())
			var out, stderr bytes.Buffer
			code := run(args, bytes.NewReader(a.Bytes()), &out, &stderr)
			if code != wantCode || out.String() != wantOut {
				t.Errorf("%s %v: exit %d (kyaml %d), output:\n%s\nkyaml's standalone writes:\n%s\nstderr:\n%s", name, args[1:], code, wantCode, out.String(), wantOut, stderr.String())
			}
			if code == 1 && !strings.Contains(stderr.String(), "[error]") {
				t.Errorf("%s: exit 1 without an error on stderr:\n%s", name, stderr.String())
			}
			compared++
		}
	}
	if compared < 40 {
		t.Errorf("compared %d runs only", compared)
	}
}

// kyamlStandalone runs kyaml's own standalone command with the function's processor.
func kyamlStandalone(t *testing.T, args []string, stdin []byte) (string, int) {
	t.Helper()
	var results framework.Results
	cmd := command.Build(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		err := function.Process(rl)
		results = rl.Results
		return err
	}), command.StandaloneEnabled, true)
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(bytes.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		return out.String(), 1
	}
	return out.String(), results.ExitCode()
}

// TestStandaloneWrappedUnreadable: a List or ResourceList in a standalone file whose item has
// metadata or metadata.annotations of the wrong shape gets the result naming that object and
// field, and every item is written back (the wrong one as it came). kyaml's standalone command
// failed there with "wrong node kind: expected MappingNode but got SequenceNode", naming
// nothing and writing nothing.
func TestStandaloneWrappedUnreadable(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fn-config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const items = "- apiVersion: v1\n  kind: Pod\n  metadata: [a, b]\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: settings\n    annotations: [x]\n" +
		"- apiVersion: v1\n  kind: Service\n  metadata: {name: s}\n"
	const want = "apiVersion: v1\nkind: Pod\nmetadata: [a, b]\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations: [x]\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
	for _, wrap := range []string{"apiVersion: v1\nkind: List\nitems:\n", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"} {
		in := filepath.Join(dir, "in.yaml")
		if err := os.WriteFile(in, []byte(wrap+items), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run([]string{cfg, in}, nil, &stdout, &stderr)
		if code != 1 || stdout.String() != want {
			t.Errorf("%s: exit %d, wrote:\n%s\nwant:\n%s\nstderr:\n%s", wrap, code, stdout.String(), want, stderr.String())
		}
		for _, line := range []string{
			"sparkui-fn: [error] v1/Pod metadata: [SUI030] Pod (object 1 of the input, no name): metadata is a list, not a mapping",
			"sparkui-fn: [error] v1/ConfigMap/settings metadata.annotations: [SUI030] ConfigMap settings: metadata.annotations is a list, not a mapping",
		} {
			if !strings.Contains(stderr.String(), line) {
				t.Errorf("%s: stderr lacks %q:\n%s", wrap, line, stderr.String())
			}
		}
	}
}
