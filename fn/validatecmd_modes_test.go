package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// TestTransformOutputValidatesClean: on every top-level fixture, transform mode reports no
// error but those bad input causes (SUI014 invalid functionConfig, SUI015 unreadable
// properties, SUI019 duplicate objects, SUI021 duplicate keys, SUI030 unreadable carriers,
// SUI047 unreadable Service ports, left unchanged, SUI053 a route sparkui cannot write, SUI054
// routes that the configuration makes collide across applications), and validate mode on the
// transform output agrees: whatever the function writes passes its own rules.
func TestTransformOutputValidatesClean(t *testing.T) {
	badInput := map[string]bool{"SUI014": true, "SUI015": true, "SUI019": true, "SUI021": true, "SUI030": true, "SUI047": true, "SUI053": true, "SUI054": true}
	for _, in := range fixtures(t) {
		t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
			r := &kio.ByteReader{Reader: bytes.NewReader(mustRead(t, in)), OmitReaderAnnotations: true}
			items, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			rl := &framework.ResourceList{Items: items, FunctionConfig: r.FunctionConfig}
			if err := function.Process(rl); err != nil {
				t.Fatal(err)
			}
			for _, res := range rl.Results {
				if res.Severity == framework.Error && !badInput[res.Tags["rule"]] {
					t.Errorf("transform mode reports an error: %s", res)
				}
			}
			v := &framework.ResourceList{Items: rl.Items, FunctionConfig: asValidate(t, r.FunctionConfig)}
			if err := function.Process(v); err != nil {
				t.Fatal(err)
			}
			for _, res := range v.Results {
				// An application transform refused (SUI030) is still untransformed, and
				// SUI060 says why it was refused.
				refused := res.Tags["rule"] == "SUI060" && strings.Contains(res.Message, "would refuse to")
				// A fixture run in uninstall mode leaves its applications untransformed: SUI060
				// is what validate must say of them, until the transformer is dropped too.
				removed := res.Tags["rule"] == "SUI060" && uninstallMode(r.FunctionConfig)
				if res.Severity == framework.Error && !badInput[res.Tags["rule"]] && !refused && !removed {
					t.Errorf("validate mode on the transform output reports an error: %s", res)
				}
			}
		})
	}
}

// uninstallMode: fc asks for mode uninstall (spec.mode, or data.mode in a ConfigMap).
func uninstallMode(fc *yaml.RNode) bool {
	if fc == nil {
		return false
	}
	for _, p := range [][]string{{"spec", "mode"}, {"data", "mode"}} {
		if n, err := fc.Pipe(yaml.Lookup(p...)); err == nil && n != nil && yaml.GetValue(n) == "uninstall" {
			return true
		}
	}
	return false
}

// asValidate is fc with mode validate (fc's other settings kept).
func asValidate(t testing.TB, fc *yaml.RNode) *yaml.RNode {
	t.Helper()
	if fc == nil {
		return yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata: {mode: validate}\n")
	}
	c := fc.Copy()
	var err error
	if c.GetKind() == "ConfigMap" {
		_, err = c.Pipe(yaml.LookupCreate(yaml.MappingNode, "data"), yaml.SetField("mode", yaml.NewStringRNode("validate")))
	} else {
		_, err = c.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("mode", yaml.NewStringRNode("validate")))
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestValidateFixturesLeaveItems: on every rule fixture (all in validate mode) the items are
// written exactly as a no-op function writes them.
func TestValidateFixturesLeaveItems(t *testing.T) {
	for _, in := range validateFixtures(t) {
		src := mustRead(t, in)
		got := runProcessor(t, src)
		if i := bytes.Index(got, []byte("\nresults:\n")); i >= 0 {
			got = got[:i+1]
		}
		if noop := runNoop(t, src); string(got) != string(noop) {
			t.Errorf("%s: validate mode changed items", in)
		}
	}
}

// BenchmarkValidate is validate mode (ConfigMap mode: validate) on N spark-submit applications
// (input: beside BenchmarkFloor) and on the function's output for them (output: beside
// BenchmarkFloorOutput), what a pre-merge check of built manifests sees.
func BenchmarkValidate(b *testing.B) {
	for _, in := range validateBenchInputs(b) {
		b.Run(in.name, func(b *testing.B) { benchmarkOn(b, processor(), in.data) })
	}
}

// BenchmarkFloorValidate is the no-op floor on exactly what BenchmarkValidate reads;
// BenchmarkFloorValidateOut the no-op on what it writes (the items plus its results), the I/O
// validate mode cannot avoid.
func BenchmarkFloorValidate(b *testing.B) {
	for _, in := range validateBenchInputs(b) {
		b.Run(in.name, func(b *testing.B) { benchmarkOn(b, noop, in.data) })
	}
}

func BenchmarkFloorValidateOut(b *testing.B) {
	for _, in := range validateBenchInputs(b) {
		out := runProcessor(b, in.data)
		b.Run(in.name, func(b *testing.B) { benchmarkOn(b, noop, out) })
	}
}

type benchInput struct {
	name string
	data []byte
}

func validateBenchInputs(b *testing.B) []benchInput {
	var out []benchInput
	for _, kind := range []string{"input", "output"} {
		for _, n := range []int{1, 100, 1000} {
			in := appsInput(b, n)
			if kind == "output" {
				in = runProcessor(b, in)
			}
			out = append(out, benchInput{fmt.Sprintf("%s/apps=%d", kind, n), withValidateConfig(in)})
		}
	}
	return out
}

func withValidateConfig(rl []byte) []byte {
	if i := bytes.Index(rl, []byte("\nresults:\n")); i >= 0 {
		rl = rl[:i+1]
	}
	return append(bytes.TrimRight(rl, "\n"), []byte("\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: sparkui\n  data:\n    mode: validate\n")...)
}

func TestBenchValidateInput(t *testing.T) {
	for _, in := range [][]byte{withValidateConfig(appsInput(t, 3)), withValidateConfig(runProcessor(t, appsInput(t, 3)))} {
		out := runProcessor(t, in)
		if n := itemCount(t, out); n != 3*3 && n != 3*6 {
			t.Errorf("%d items", n)
		}
		if !bytes.Contains(out, []byte("mode: validate")) {
			t.Error("not in validate mode")
		}
	}
}

// TestValidateModeInKustomizeAndKpt pins what docs/validate.md tells users, with the real
// tools: kustomize's validators: field refuses sparkui-fn (kyaml hands the items back with
// path annotations, and kustomize wants them untouched), a transformers: entry in validate
// mode leaves the build exactly as it is without it and fails the build on an error finding,
// and kpt runs it as a pipeline validator. It needs the kustomize CLI (SPARKUI_KUSTOMIZE, or
// `make kustomize`'s cache) and kpt on PATH, like the examples' tests.
func TestValidateModeInKustomizeAndKpt(t *testing.T) {
	kustomize := os.Getenv("SPARKUI_KUSTOMIZE")
	if kustomize == "" {
		home, _ := os.UserHomeDir()
		kustomize = filepath.Join(home, ".cache", "sparkui", "bin", "kustomize-v5.8.1")
	}
	if _, err := os.Stat(kustomize); err != nil {
		t.Fatalf("the kustomize CLI is needed (make kustomize): %v", err)
	}
	kpt, err := exec.LookPath("kpt")
	if err != nil {
		t.Fatalf("kpt is needed on PATH: %v", err)
	}
	dir := t.TempDir()
	fn := filepath.Join(dir, "sparkui-fn")
	if out, err := exec.Command("go", "build", "-o", fn, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runTool := func(name string, args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	fnConfig := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sparkui-validate\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + fn + "\ndata:\n  mode: validate\n"
	pkg := func(fixture, tag, kustomization string) string {
		d := filepath.Join(dir, fixture+"-"+tag)
		os.MkdirAll(d, 0o755)
		m, _ := plainInput(t, d, mustRead(t, "../validate/testdata/"+fixture+"/input.yaml"))
		os.Rename(m, filepath.Join(d, "m.yaml"))
		os.WriteFile(filepath.Join(d, "sparkui-validate.yaml"), []byte(fnConfig), 0o600)
		os.WriteFile(filepath.Join(d, "kustomization.yaml"), []byte("resources:\n- m.yaml\n"+kustomization), 0o600)
		return d
	}

	plain, _, err := runTool(kustomize, "build", pkg("sui001-pass", "plain", ""))
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runTool(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", pkg("sui001-pass", "validators", "validators:\n- sparkui-validate.yaml\n"))
	if err == nil || !strings.Contains(stderr, "validator shouldn't modify the resource map") {
		t.Errorf("kustomize validators: accepted sparkui-fn, or failed otherwise: %v\n%s", err, stderr)
	}
	out, stderr, err := runTool(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", pkg("sui001-pass", "transformers", "transformers:\n- sparkui-validate.yaml\n"))
	if err != nil || out != plain {
		t.Errorf("kustomize transformers: in validate mode: %v\n%s\n(-without +with):\n%s", err, stderr, cmp.Diff(plain, out))
	}
	_, stderr, err = runTool(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", pkg("sui001-fail", "transformers", "transformers:\n- sparkui-validate.yaml\n"))
	if err == nil || !strings.Contains(stderr, "[SUI001]") {
		t.Errorf("kustomize build with an error finding: %v\n%s", err, stderr)
	}

	kptfile := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  validators:\n  - exec: " + fn + "\n    configMap:\n      mode: validate\n"
	for fixture, wantOK := range map[string]bool{"sui001-pass": true, "sui001-fail": false} {
		d := filepath.Join(dir, "kpt-"+fixture)
		os.MkdirAll(d, 0o755)
		plainInput(t, d, mustRead(t, "../validate/testdata/"+fixture+"/input.yaml"))
		os.Remove(filepath.Join(d, "fn-config.yaml"))
		os.WriteFile(filepath.Join(d, "Kptfile"), []byte(kptfile), 0o600)
		out, stderr, err := runTool(kpt, "fn", "render", d, "--allow-exec", "--output", "unwrap")
		if ok := err == nil; ok != wantOK || (!wantOK && !strings.Contains(out+stderr, "[SUI001]")) {
			t.Errorf("kpt fn render %s: %v\n%s%s", fixture, err, out, stderr)
		}
	}
}

// oneLine folds whitespace as the report formats do.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestValidateSkipsFIFO: a named pipe called *.yaml in a directory is reported (SUI052, a
// warning naming it) and not opened, where opening it blocked forever; the directory's
// other files are validated as usual.
func TestValidateSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o600)
	fifo := filepath.Join(dir, "feed.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	type res struct {
		code           int
		stdout, stderr string
	}
	done := make(chan res, 1)
	go func() {
		code, stdout, stderr := runCmd(t, "", dir, "--output", "json")
		done <- res{code, stdout, stderr}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		// Unblock the reader so the test can end.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("validate DIR hangs on a named pipe")
	}
	var out jsonOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var got []string
	for _, f := range out.Results {
		got = append(got, strings.Join([]string{f.Rule, f.Severity, f.File.Path, f.Message}, " | "))
	}
	want := []string{"SUI052 | warning | " + fifo + " | [SUI052] " + fifo + " is a named pipe, not a regular file: not read (reading it could block forever)"}
	if d := cmp.Diff(want, got); d != "" || r.code != 0 || out.Summary.Objects != 1 {
		t.Errorf("exit %d, %d objects; findings (-want +got):\n%s", r.code, out.Summary.Objects, d)
	}
}
