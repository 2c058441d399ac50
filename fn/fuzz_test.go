package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
)

// FuzzFunction runs the whole function on arbitrary YAML: it must not panic, must not lose an
// item it does not own, must tag every result, and must be idempotent on its own output.
func FuzzFunction(f *testing.F) {
	ins, _ := filepath.Glob("../testdata/*/input.yaml")
	for _, in := range ins {
		b, err := os.ReadFile(in)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {labels: {spark-role: driver}}\nspec: {containers: [{ports: [{containerPort: 0}]}]}"))
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: 7}"))
	// Plain streams, not-objects and duplicate keys.
	f.Add([]byte("apiVersion: v1\nkind: Pod\nkind: Service\nmetadata: {name: x}\n"))
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - port: 80\n    port: 0\n"))
	f.Add([]byte("hello: world\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {config.kubernetes.io/index: '7'}\n---\nb: &a {c: 1}\nd: *a\n<<: *a\n"))
	// Wrong-shaped metadata, an alias inside itself, JSON lines.
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: hello}\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: &a {k: [x, *a]}\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}` + "\n" + `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer failIfHung("FuzzFunction", 5*time.Second, data)()
		fuzzPlainStream(t, data)
		r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
		items, err := r.Read()
		if err != nil {
			return
		}
		// kyaml itself cannot write some inputs (a scalar document): a no-op function fails on
		// them too, so only panics and lost items are checked there.
		writable := kyamlCanWrite(items)
		rl := &framework.ResourceList{Items: items, FunctionConfig: r.FunctionConfig}
		before := append([]*yaml.RNode(nil), items...)
		if err := function.Process(rl); err != nil {
			t.Fatalf("Process returned an error instead of results: %v", err)
		}
		kept := map[*yaml.RNode]bool{}
		for _, it := range rl.Items {
			kept[it] = true
		}
		for _, it := range before {
			if !kept[it] && app.Labels(it)[names.LabelManagedBy] != names.ManagedByValue {
				t.Fatalf("item lost:\n%s", it.MustString())
			}
		}
		for _, res := range rl.Results {
			if res.Tags["rule"] == "" || !strings.HasPrefix(res.Message, "["+res.Tags["rule"]+"] ") {
				t.Fatalf("untagged result: %+v", res)
			}
		}

		if !writable {
			return
		}
		// Idempotency: the output, read back and processed again, is written exactly as kyaml
		// writes it back untouched (kyaml's own rewriting of odd input is not ours to judge).
		first := write(t, rl)
		reread := func() *framework.ResourceList {
			r2 := &kio.ByteReader{Reader: bytes.NewReader(first), OmitReaderAnnotations: true}
			items2, err := r2.Read()
			if err != nil {
				t.Fatalf("own output unreadable: %v\n%s", err, first)
			}
			return &framework.ResourceList{Items: items2, FunctionConfig: r.FunctionConfig}
		}
		untouched := reread()
		if !kyamlCanWrite(untouched.Items) {
			return
		}
		floor := write(t, untouched)
		rl2 := reread()
		if err := function.Process(rl2); err != nil {
			t.Fatal(err)
		}
		if second := write(t, rl2); !bytes.Equal(floor, second) {
			t.Fatalf("not idempotent:\n--- first\n%s\n--- second\n%s", floor, second)
		}
	})
}

func write(t *testing.T, rl *framework.ResourceList) []byte {
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b}).Write(rl.Items); err != nil {
		t.Fatalf("write: %v", err)
	}
	return b.Bytes()
}

// kyamlCanWrite reports whether kyaml's own writer takes items (it panics on some odd
// documents, such as a sequence with a null element at the top).
func kyamlCanWrite(items []*yaml.RNode) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return (kio.ByteWriter{Writer: &bytes.Buffer{}}).Write(items) == nil
}

// failIfHung panics, naming the input, when the returned stop is not called within d: the
// fuzzer then records the input instead of a worker silently stalling. Use as
// defer failIfHung(...)().
func failIfHung(target string, d time.Duration, data []byte) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			panic(fmt.Sprintf("%s: no answer in %s for input %q", target, d, data))
		}
	}()
	return func() { close(done) }
}

// fuzzPlainStream runs the binary's entry point on data as stdin. A plain stream either is
// refused (exit 1, a reason on stderr, nothing on stdout) or comes back with no kyaml reader
// annotation it did not carry.
func fuzzPlainStream(t *testing.T, data []byte) {
	if !krmio.IsStream(data) {
		return
	}
	var stdout, stderr bytes.Buffer
	code := run(nil, bytes.NewReader(data), &stdout, &stderr)
	switch {
	case code != 0 && code != 1:
		t.Fatalf("plain stream: exit %d", code)
	case code == 1 && stderr.Len() == 0:
		t.Fatalf("plain stream: exit 1 with nothing on stderr")
	}
	for _, a := range []string{"config.kubernetes.io/index", "internal.config.kubernetes.io/"} {
		if bytes.Contains(stdout.Bytes(), []byte(a)) && !bytes.Contains(data, []byte(a)) {
			t.Fatalf("plain stream: output carries %s:\n%s", a, stdout.String())
		}
	}
}
