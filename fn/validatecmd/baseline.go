package validatecmd

import (
	"fmt"
	"io"

	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/validate"
	"github.com/sparkui/sparkui/validate/report"
)

// Baseline compares the rendering opts.Paths (NEW) with opts.Baseline (OLD, what the cluster
// has, e.g. the main branch's), both read as Validate reads its inputs, and reports what
// applying NEW does to each carrier (validate.CompareRenderings: SUI070–SUI074) at its place
// in NEW. It runs no other rule: `sparkui-fn validate NEW` does.
func Baseline(opts Options, stdin io.Reader) (*report.Report, error) {
	if opts.Baseline == "-" && len(opts.Paths) == 1 && opts.Paths[0] == "-" {
		return nil, fmt.Errorf("--baseline - and NEW - both want standard input: name a file for one of them")
	}
	budget := opts.Limits.Budget()
	oldIn := &krmio.FilesReader{Paths: []string{opts.Baseline}, Stdin: stdin, StdinName: opts.StdinName, Budget: budget}
	oldItems, err := oldIn.Read()
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %v", opts.Baseline, err)
	}
	if len(oldIn.Docs) == 0 {
		return nil, fmt.Errorf("--baseline %s: no objects: an empty baseline would hide every change", opts.Baseline)
	}
	in := &krmio.FilesReader{Paths: opts.Paths, Stdin: stdin, StdinName: opts.StdinName, Budget: budget}
	items, err := in.Read()
	if err != nil {
		return nil, err
	}
	rep := &report.Report{Rules: report.Catalog(), ToolVersion: version.Version, Files: in.Files}
	at := map[string]map[int]*object{}
	for _, d := range in.Docs {
		o := newObject(d)
		if at[o.File] == nil {
			at[o.File] = map[int]*object{}
		}
		at[o.File][o.Index] = o
		rep.Objects = append(rep.Objects, o.Object)
	}
	results, err := validate.CompareRenderings(oldItems, items)
	if err != nil {
		return nil, err
	}
	ruleIx := map[string]int{}
	for i, r := range rep.Rules {
		ruleIx[r.ID] = i
	}
	for _, r := range results {
		f := &report.Finding{Result: r, Rule: r.Tags["rule"], RuleIndex: ruleIx[r.Tags["rule"]]}
		if r.File != nil {
			if o := at[r.File.Path][r.File.Index]; o != nil {
				f.Object, f.File, f.Line = o.Object, o.File, placeLine(o, r)
			}
		}
		rep.Findings = append(rep.Findings, f)
	}
	return rep, nil
}
