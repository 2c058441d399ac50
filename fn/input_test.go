package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
)

// bomb is a 1.3 KB ConfigMap whose ten levels of ten aliases stand for 10^10 strings.
var bomb = func() string {
	var b strings.Builder
	b.WriteString("# ten levels of ten aliases\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n")
	b.WriteString("  level0: &level0 [" + strings.TrimSuffix(strings.Repeat(`"lol", `, 10), ", ") + "]\n")
	for l := 1; l <= 10; l++ {
		p := "*level" + strconv.Itoa(l-1)
		b.WriteString("  level" + strconv.Itoa(l) + ": &level" + strconv.Itoa(l) + " [" + strings.TrimSuffix(strings.Repeat(p+", ", 10), ", ") + "]\n")
	}
	return b.String()
}()

const plainCM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  k: v\n"

// TestAliasBombChild is TestAliasBomb's subprocess: `sparkui-fn validate` on the file named
// by $SPARKUI_BOMB_FILE, then its peak resident memory on stderr. Its address space is capped
// so that an unbounded expansion fails fast instead of taking the machine.
func TestAliasBombChild(t *testing.T) {
	path := os.Getenv("SPARKUI_BOMB_FILE")
	if path == "" {
		return
	}
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 3 << 30, Max: 3 << 30})
	var stdout, stderr bytes.Buffer
	code := run([]string{"validate", path, "--output", "json"}, nil, &stdout, &stderr)
	os.Stdout.Write(stdout.Bytes())
	status, _ := os.ReadFile("/proc/self/status")
	os.Stderr.WriteString("exit " + strconv.Itoa(code) + "\n" + string(status))
	os.Exit(0)
}

// TestAliasBomb: a 1 KB alias bomb is an error result naming the object and its document,
// from `sparkui-fn validate` (peak memory measured in a subprocess) and from the function,
// which writes it back as it came; the other objects are read as usual.
func TestAliasBomb(t *testing.T) {
	in := plainCM + "---\n" + bomb
	if len(bomb) < 1024 || len(bomb) > 2048 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	path := filepath.Join(t.TempDir(), "bomb.yaml")
	os.WriteFile(path, []byte(in), 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAliasBombChild$")
	cmd.Env = append(os.Environ(), "SPARKUI_BOMB_FILE="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("validate in a subprocess: %v\n%s", err, tail(stderr.String()))
	}
	hwm := -1
	code := ""
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "VmHWM:" {
			hwm, _ = strconv.Atoi(f[1])
		} else if len(f) == 2 && f[0] == "exit" {
			code = f[1]
		}
	}
	t.Logf("sparkui-fn validate on a %d-byte alias bomb: peak RSS %d kB", len(bomb), hwm)
	// The test binary alone is ~40 MB; expanding the bomb would take gigabytes.
	if hwm < 0 || hwm > 150<<10 {
		t.Errorf("peak RSS %d kB, want at most 150 MB", hwm)
	}
	if code != "1" {
		t.Errorf("exit %s, want 1 (an error finding)", code)
	}
	var rep jsonOut
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var got []string
	for _, r := range rep.Results {
		got = append(got, strings.Join([]string{r.Rule, r.Severity, r.ResourceRef.Kind, r.ResourceRef.Name, r.File.Path, itoa(r.File.Line), r.Message}, " | "))
	}
	want := []string{"SUI051 | error | ConfigMap | bomb | " + path + " | 9 | [SUI051] ConfigMap bomb (object 2 of the input): its aliases expand it past twice its size plus 10000 nodes (an alias bomb, not a manifest); sparkui reads no further and leaves it as it is"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("validate findings (-want +got):\n%s", d)
	}
	if rep.Summary.Objects != 2 {
		t.Errorf("%d objects read, want 2", rep.Summary.Objects)
	}

	var fout, ferr bytes.Buffer
	if c := run(nil, strings.NewReader(in), &fout, &ferr); c != 1 {
		t.Errorf("function: exit %d, want 1", c)
	}
	if fout.String() != in {
		t.Errorf("function output:\n%s", cmp.Diff(in, fout.String()))
	}
	wantErr := "sparkui-fn: [error] v1/ConfigMap/bomb: [SUI051] ConfigMap bomb (object 2 of the input): its aliases expand it past twice its size plus 10000 nodes (an alias bomb, not a manifest); sparkui reads no further and leaves it as it is\n"
	if d := cmp.Diff(wantErr, ferr.String()); d != "" {
		t.Errorf("function stderr (-want +got):\n%s", d)
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// TestWrongShapedMetadata: metadata or metadata.annotations that is a list or a scalar is an
// error naming the object and the field, on a plain stream and in a ResourceList; the object
// is written back as it came and every other object is read and rewritten as usual.
func TestWrongShapedMetadata(t *testing.T) {
	app, err := os.ReadFile("../examples/spark-submit/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ md, stderr string }{
		{"metadata: [a]", `[error] v1/ConfigMap metadata: [SUI030] ConfigMap (object 1 of the input, no name): metadata is a list, not a mapping; kubectl refuses the object, sparkui leaves it as it is`},
		{"metadata: hello", `[error] v1/ConfigMap metadata: [SUI030] ConfigMap (object 1 of the input, no name): metadata is the scalar "hello", not a mapping; kubectl refuses the object, sparkui leaves it as it is`},
		{"metadata: {name: x, annotations: [a]}", `[error] v1/ConfigMap/x metadata.annotations: [SUI030] ConfigMap x: metadata.annotations is a list, not a mapping; kubectl refuses the object, sparkui leaves it as it is`},
		{"metadata: {name: x, annotations: hello}", `[error] v1/ConfigMap/x metadata.annotations: [SUI030] ConfigMap x: metadata.annotations is the scalar "hello", not a mapping; kubectl refuses the object, sparkui leaves it as it is`},
	} {
		bad := "apiVersion: v1\nkind: ConfigMap\n" + tc.md + "\n"
		t.Run(tc.md, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(nil, strings.NewReader(bad+"---\n"+string(app)), &stdout, &stderr)
			docs := strings.Split(stdout.String(), "---\n")
			if code != 1 || docs[0] != bad || !strings.Contains(stdout.String(), "-ui-svc") {
				t.Errorf("plain stream: exit %d, output:\n%s", code, stdout.String())
			}
			if got := strings.Split(stderr.String(), "\n")[0]; got != "sparkui-fn: "+tc.stderr {
				t.Errorf("plain stream stderr:\n%s\nwant first line\nsparkui-fn: %s", stderr.String(), tc.stderr)
			}

			rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  " + tc.md +
				"\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: other\n"
			stdout.Reset()
			stderr.Reset()
			code = run(nil, strings.NewReader(rl), &stdout, &stderr)
			if code != 1 || !strings.HasPrefix(stdout.String(), rl+"results:\n") {
				t.Errorf("ResourceList: exit %d, output:\n%s", code, stdout.String())
			}
			if stderr.String() != "sparkui-fn: "+tc.stderr+"\n" {
				t.Errorf("ResourceList stderr:\n%s\nwant\nsparkui-fn: %s", stderr.String(), tc.stderr)
			}
		})
	}
}

// countingWriter counts the writes it gets.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestOneWrite: the function writes its output in one piece once it is complete, on the
// plain path and the ResourceList path, so that a failure or a kill never leaves a
// document cut in the middle on stdout.
func TestOneWrite(t *testing.T) {
	app, err := os.ReadFile("../examples/spark-submit/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rl := readFixture(t, "fixed-port")
	for name, in := range map[string][]byte{"plain": app, "ResourceList": rl} {
		var stdout countingWriter
		var stderr bytes.Buffer
		code := run(nil, bytes.NewReader(in), &stdout, &stderr)
		if code != 0 || stdout.writes != 1 || strings.Count(stdout.String(), "kind: Service\n") < 2 {
			t.Errorf("%s: exit %d, %d writes for %d bytes; stderr %s", name, code, stdout.writes, stdout.Len(), stderr.String())
		}
	}
}

// TestJSONLines: JSON lines (one object per line) on a plain stream: every object is read
// and written back, by the function and by `sparkui-fn validate` (each at its line); before,
// every object after the first was dropped.
func TestJSONLines(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":0}]}]}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}
`
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 0}]}]}}
---
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}
`
	if d := cmp.Diff(want, stdout.String()); d != "" {
		t.Errorf("function output (-want +got):\n%s", d)
	}
	withDriver := strings.Replace(in, `"metadata":{"name":"p"}`, `"metadata":{"name":"p","labels":{"spark-role":"driver"}}`, 1)
	code, out, serr := runCmd(t, withDriver, "-", "--output", "json")
	var rep jsonOut
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", code, serr, out)
	}
	var got []string
	for _, r := range rep.Results {
		if r.Rule == "SUI001" {
			got = append(got, strings.Join([]string{r.Rule, r.ResourceRef.Name, r.Field.Path, itoa(r.File.Line)}, " "))
		}
	}
	if rep.Summary.Objects != 3 || cmp.Diff([]string{"SUI001 p spec.containers[0].ports[0].containerPort 2"}, got) != "" {
		t.Errorf("validate: exit %d, %d objects, SUI001 findings %q\n%s", code, rep.Summary.Objects, got, serr)
	}
}

// TestYAMLErrorsPlaced: a syntax error in a plain stream is reported at its document and its
// line in the whole stream, with a column for a tab, a NUL byte and invalid UTF-8, the same
// by the function and by `sparkui-fn validate`; nothing is written on stdout.
func TestYAMLErrorsPlaced(t *testing.T) {
	first := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n"
	for _, tc := range []struct{ in, want string }{
		{first + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [b\n", "document 2, line 9: did not find expected ',' or ']'"},
		{first + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n\tlabels: {}\n", "document 2, line 10, column 1: found a tab character that violates indentation"},
		{first + "kind: Pod\nmetadata:\n\tname: x\n", "document 2, line 8, column 1: found character that cannot start any token (a tab: YAML indents with spaces only)"},
		{first + "kind: Pod\nmetadata:\n  name: b\x00c\n", "document 2, line 8, column 10: control character U+0000 is not allowed"},
		{first + "kind: Pod\nmetadata:\n  name: b\xffc\n", "document 2, line 8, column 10: invalid UTF-8 (byte 0xff)"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(nil, strings.NewReader(tc.in), &stdout, &stderr)
		if want := "sparkui-fn: standard input, " + tc.want + "\n"; code != 1 || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("function: exit %d, stdout %q, stderr %q; want %q", code, stdout.String(), stderr.String(), want)
		}
		code, out, serr := runCmd(t, tc.in, "-")
		if want := "sparkui-fn validate: stdin: " + tc.want + "\n"; code != 2 || out != "" || serr != want {
			t.Errorf("validate: exit %d, stdout %q, stderr %q; want %q", code, out, serr, want)
		}
	}
}

// findingsOf are "RULE SEVERITY KIND NAME FIELD" of results, sorted.
func findingsOf(rs framework.Results) []string {
	var out []string
	for _, r := range rs {
		kind, name, field := "-", "-", "-"
		if r.ResourceRef != nil && r.ResourceRef.Kind != "" {
			kind = r.ResourceRef.Kind
		}
		if r.ResourceRef != nil && r.ResourceRef.Name != "" {
			name = r.ResourceRef.Name
		}
		if r.Field != nil {
			field = r.Field.Path
		}
		out = append(out, strings.Join([]string{r.Tags["rule"], string(r.Severity), kind, name, field}, " "))
	}
	sort.Strings(out)
	return out
}

// TestValidateAgreesWithFunction: `sparkui-fn validate` on a plain stream finds what the
// function finds in validate mode on the same objects (as a ResourceList): for a bare
// `hello: world`, wrong-shaped metadata, an alias bomb, resources at versions sparkui does not
// read and a List among other documents (SUI050, which both report instead of nothing).
func TestValidateAgreesWithFunction(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want []string
	}{
		"hello world":   {"hello: world\n", []string{"SUI030 error - - apiVersion"}},
		"metadata list": {"apiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n", []string{"SUI030 error ConfigMap - metadata"}},
		"alias bomb":    {bomb, []string{"SUI051 error ConfigMap bomb -"}},
		// The port is read through its alias by both (yamlx.Expand), so both name it.
		// A merge key with no alias at all: both resolve it too.
		"merged port": {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a-driver\n  labels: {spark-role: driver}\nspec:\n  serviceAccountName: s\n" +
			"  containers:\n  - name: spark-kubernetes-driver\n    ports:\n    - <<: {name: spark-ui, containerPort: 0}\n", []string{"SUI001 error Pod a-driver spec.containers[0].ports[0].containerPort", "SUI060 error Pod a-driver -"}},
		"aliased port": {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a-driver\n  labels: {spark-role: driver}\n" +
			"  annotations: {note: &p {name: spark-ui, containerPort: 0}}\nspec:\n  serviceAccountName: s\n" +
			"  containers:\n  - name: spark-kubernetes-driver\n    ports:\n    - *p\n", []string{"SUI001 error Pod a-driver spec.containers[0].ports[0].containerPort", "SUI060 error Pod a-driver -"}},
		"unread versions": {"apiVersion: sparkoperator.k8s.io/v1beta1\nkind: SparkApplication\nmetadata: {name: old}\n---\n" +
			"apiVersion: spark.apache.org/v2\nkind: SparkApplication\nmetadata: {name: next}\n---\n" +
			"apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
			[]string{"SUI050 warning List l items", "SUI050 warning SparkApplication next apiVersion", "SUI050 warning SparkApplication old apiVersion"}},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, serr := runCmd(t, tc.in, "-", "--output", "json")
			var rep jsonOut
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("validate: exit %d: %v\n%s", code, err, serr)
			}
			var fromValidate []string
			for _, r := range rep.Results {
				kind, name, field := "-", "-", "-"
				if r.ResourceRef != nil && r.ResourceRef.Kind != "" {
					kind = r.ResourceRef.Kind
				}
				if r.ResourceRef != nil && r.ResourceRef.Name != "" {
					name = r.ResourceRef.Name
				}
				if r.Field != nil {
					field = r.Field.Path
				}
				fromValidate = append(fromValidate, strings.Join([]string{r.Rule, r.Severity, kind, name, field}, " "))
			}
			sort.Strings(fromValidate)

			items, err := (&kio.ByteReader{Reader: strings.NewReader(tc.in), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			rl := &framework.ResourceList{Items: items, FunctionConfig: yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {mode: validate}\n")}
			if err := function.Process(rl); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, findingsOf(rl.Results)); d != "" {
				t.Errorf("function (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.want, fromValidate); d != "" {
				t.Errorf("validate (-want +got):\n%s", d)
			}
		})
	}
}

// TestValidatePlacesWrongShapedMetadata: `sparkui-fn validate` places the error for an object
// whose metadata or annotations are no mapping (where its file annotations cannot be written)
// at the field's line, with the message the function gives.
func TestValidatePlacesWrongShapedMetadata(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: hello\n"
	code, out, _ := runCmd(t, in, "-")
	want := `stdin:8: error: [SUI030] ConfigMap (object 2 of the input, no name): metadata is a list, not a mapping; kubectl refuses the object, sparkui leaves it as it is (ConfigMap metadata)
stdin:14: error: [SUI030] ConfigMap x: metadata.annotations is the scalar "hello", not a mapping; kubectl refuses the object, sparkui leaves it as it is (ConfigMap x metadata.annotations)
`
	if d := cmp.Diff(want, out); code != 1 || d != "" {
		t.Errorf("exit %d, report (-want +got):\n%s", code, d)
	}
}

// TestPodShapeIsCarrierError: a spark-submit driver Pod goes through the one carrier
// detection and preparation like every carrier: a spec that is a list, or no container to run
// the driver in, is an SUI030 error naming the field, the Pod is written back as it came, and
// nothing is added for it (no UI Service, no RBAC that no runtime would use).
func TestPodShapeIsCarrierError(t *testing.T) {
	const head = "apiVersion: v1\nkind: Pod\nmetadata: {name: d-driver, namespace: ns, labels: {spark-role: driver}}\n"
	for _, tc := range []struct{ spec, want string }{
		{"spec: []\n", "v1/Pod/ns/d-driver spec: [SUI030] Pod ns/d-driver: spec is a list, want a mapping; sparkui adds nothing for it"},
		{"spec: {restartPolicy: Never}\n", "v1/Pod/ns/d-driver spec.containers[0]: [SUI030] Pod ns/d-driver: spec.containers[0] is missing: the pod template has no container to run the driver in; sparkui adds nothing for it"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			pod := head + tc.spec
			var stdout, stderr bytes.Buffer
			code := run(nil, strings.NewReader(pod), &stdout, &stderr)
			if code != 1 || stdout.String() != pod {
				t.Errorf("exit %d, output:\n%s", code, stdout.String())
			}
			// A plain stream's results all go to stderr (it has no results field): one error.
			if want := "sparkui-fn: [error] " + tc.want + "\n"; !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "[error]") != 1 {
				t.Errorf("stderr:\n%s\nwant the one error\n%s", stderr.String(), want)
			}
		})
	}
}
