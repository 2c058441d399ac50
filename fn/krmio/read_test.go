package krmio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/inputlimit"
)

// TestReaderForms: the one Reader tells each form of input apart, reads its items and holds
// the ones sparkui cannot read, with the result naming object and field.
func TestReaderForms(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
	const badPod = "apiVersion: v1\nkind: Pod\nmetadata: [a]\n"
	for _, c := range []struct {
		name, in string
		form     Form
		items    int
		held     string // the field of the held item's result, "" for none
		inOutput bool
	}{
		{"resource list", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + strings.ReplaceAll(pod, "\n", "\n  ") + "\n", ResourceList, 1, "", true},
		{"v1 List", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(badPod, "\n", "\n  ") + "\n", List, 1, "metadata", false},
		{"plain stream", pod + "---\n" + badPod, Stream, 2, "metadata", false},
		{"JSON lines", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}` + "\n" + `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","annotations":[1]}}` + "\n", Stream, 2, "metadata.annotations", false},
		{"empty", "", Stream, 0, "", false},
		{"only a separator", "---\n", Stream, 0, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Reader{Stdin: strings.NewReader(c.in), Budget: inputlimit.NewBudget(0)}
			items, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			if r.Form != c.form || len(items) != c.items || r.ResultsInOutput() != c.inOutput {
				t.Errorf("form %d, %d items, results in output %v; want form %d, %d items, %v", r.Form, len(items), r.ResultsInOutput(), c.form, c.items, c.inOutput)
			}
			switch {
			case c.held == "" && r.Held.Len() != 0:
				t.Errorf("held %v", r.Held.Results)
			case c.held != "":
				if r.Held.Len() != 1 || r.Held.Results[0].Field == nil || r.Held.Results[0].Field.Path != c.held ||
					!strings.Contains(r.Held.Results[0].Message, "[SUI030] Pod ") {
					t.Errorf("held %d: %+v; want one SUI030 naming the Pod at %s", r.Held.Len(), r.Held.Results, c.held)
				}
			}
		})
	}
	r := &Reader{Stdin: strings.NewReader("a: [\n"), Budget: inputlimit.NewBudget(0)}
	if _, err := r.Read(); err == nil || err.Error() != "standard input, document 1, line 2: did not find expected node content" {
		t.Errorf("syntax error: %v", err)
	}
	r = &Reader{Stdin: strings.NewReader(pod), Budget: inputlimit.NewBudget(10)}
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), "standard input") || !strings.Contains(err.Error(), "max-input-bytes") {
		t.Errorf("over the limit: %v", err)
	}
}

// TestReaderFiles: standalone mode's files are read in order, standard input first where "-"
// is given, a List in a file unwrapped, and the functionConfig is the configuration file's.
func TestReaderFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("cfg.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-file}\n")
	list := write("list.yaml", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n"+
		"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: from-list}}\n")
	plain := write("plain.yaml", "---\napiVersion: v1\nkind: Pod\nmetadata: {name: c}\n")
	// One object each, no "---", the last without a final newline: still separate objects.
	d := write("d.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: d}")
	e := write("e.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: e}\n")
	empty := write("empty.yaml", "")
	for _, c := range []struct {
		args []string
		want string
	}{{[]string{cfg, list}, "b"}, {[]string{cfg, plain, "-"}, "a,c"}, {[]string{cfg, d, e}, "d,e"}, {[]string{cfg, e, empty, d, "-"}, "a,e,d"}} {
		r := &Reader{Stdin: strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"), Args: c.args, Budget: inputlimit.NewBudget(0)}
		items, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, it := range items {
			names = append(names, it.GetName())
		}
		if r.Form != Files || strings.Join(names, ",") != c.want || r.FunctionConfig.GetName() != "from-file" {
			t.Errorf("%v: form %d, items %v, functionConfig %s; want Files, %s, from-file", c.args, r.Form, names, r.FunctionConfig.GetName(), c.want)
		}
	}
	r := &Reader{Args: []string{cfg, filepath.Join(dir, "missing.yaml")}, Budget: inputlimit.NewBudget(0)}
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), "unable to read input file") || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}
