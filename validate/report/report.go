// Package report is what `sparkui-fn validate` prints, independent of the format: the files
// and objects read, the findings placed at their file and line, and the rule catalog. Each
// output format lives in its own file (text.go, json.go, sarif.go, junit.go) and reads only
// this model.
package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// Report is one validation run.
type Report struct {
	Files    []string // in the order they were read
	Objects  []*Object
	Findings []*Finding // in reading order: file, line, then rule
	Rules    []Rule     // the catalog, in ID order
	// ToolVersion is the version SARIF names for the tool.
	ToolVersion string
}

// Object is one Kubernetes object of the input and where it was read.
type Object struct {
	File                  string
	Index                 int // position among the file's objects, as config.kubernetes.io/index counts
	Line                  int
	Kind, Namespace, Name string
}

// ID names the object in JUnit test classes: Kind/ns/name, or its position when it has no
// kind and no name.
func (o *Object) ID() string {
	if o.Kind == "" && o.Name == "" {
		return fmt.Sprintf("document %d", o.Index)
	}
	if o.Namespace != "" {
		return o.Kind + "/" + o.Namespace + "/" + o.Name
	}
	return o.Kind + "/" + o.Name
}

// Finding is a result placed in the input.
type Finding struct {
	Result *framework.Result
	Rule   string
	Object *Object // nil when the result names no object of the input
	File   string  // "" when unknown
	Line   int     // 0 when unknown
	// RuleIndex is the rule's position in Report.Rules, -1 when it is not in the catalog.
	RuleIndex int
}

// Rule is what the formats say about a catalog entry.
type Rule struct {
	ID       string
	Name     string
	Severity framework.Severity
	Title    string
	Catches  string
	Why      string
	Fix      string
	HelpURI  string
	// Checked is false for rules raised outside the model (the functionConfig's): JUnit has
	// no test case per object for them.
	Checked bool
}

// Count is the number of findings of a severity.
func (r *Report) Count(sev framework.Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Result.Severity == sev {
			n++
		}
	}
	return n
}

// Summary is the one line the text format prints on stderr.
func (r *Report) Summary() string {
	plural := func(n int, s string) string {
		if n == 1 {
			return "1 " + s
		}
		return strconv.Itoa(n) + " " + s + "s"
	}
	return fmt.Sprintf("%s, %s, %d info in %s from %s",
		plural(r.Count(framework.Error), "error"), plural(r.Count(framework.Warning), "warning"),
		r.Count(framework.Info), plural(len(r.Objects), "object"), plural(len(r.Files), "file"))
}

// Formats are the output formats by name, as --output spells them.
var Formats = map[string]func(io.Writer, *Report) error{
	"text":  WriteText,
	"json":  WriteJSON,
	"sarif": WriteSARIF,
	"junit": WriteJUnit,
}

// Place is file:line, the file, or the tool's name when the finding has no place.
func (f *Finding) Place() string {
	switch {
	case f.File != "" && f.Line > 0:
		return f.File + ":" + strconv.Itoa(f.Line)
	case f.File != "":
		return f.File
	}
	return "sparkui-fn"
}

// Subject is "Kind ns/name field.path", what the finding is about.
func (f *Finding) Subject() string {
	var parts []string
	if ref := f.Result.ResourceRef; ref != nil {
		name := ref.Name
		if ref.Namespace != "" {
			name = ref.Namespace + "/" + name
		}
		if s := strings.TrimSpace(ref.Kind + " " + name); s != "" {
			parts = append(parts, s)
		}
	}
	if p := f.field(); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func (f *Finding) field() string {
	if f.Result.Field == nil {
		return ""
	}
	return f.Result.Field.Path
}

// oneLine folds a message's whitespace: every format puts a finding on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
