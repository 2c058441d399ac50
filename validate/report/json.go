package report

import (
	"encoding/json"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

type jsonReport struct {
	Results []jsonResult `json:"results"`
	Summary jsonSummary  `json:"summary"`
}

type jsonResult struct {
	Rule        string                   `json:"rule"`
	Severity    string                   `json:"severity"`
	Message     string                   `json:"message"`
	ResourceRef *yaml.ResourceIdentifier `json:"resourceRef,omitempty"`
	Field       *jsonField               `json:"field,omitempty"`
	File        *jsonFile                `json:"file,omitempty"`
	Tags        map[string]string        `json:"tags,omitempty"`
}

type jsonField struct {
	Path string `json:"path"`
}

type jsonFile struct {
	Path  string `json:"path"`
	Index int    `json:"index"`
	Line  int    `json:"line,omitempty"`
}

type jsonSummary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Info     int `json:"info"`
	Objects  int `json:"objects"`
	Files    int `json:"files"`
}

// WriteJSON writes the results as the KRM function reports them, each with its file and line,
// and a summary of counts.
func WriteJSON(w io.Writer, rep *Report) error {
	out := jsonReport{Results: []jsonResult{}, Summary: jsonSummary{
		Errors: rep.Count(framework.Error), Warnings: rep.Count(framework.Warning), Info: rep.Count(framework.Info),
		Objects: len(rep.Objects), Files: len(rep.Files),
	}}
	for _, f := range rep.Findings {
		r := jsonResult{Rule: f.Rule, Severity: string(f.Result.Severity), Message: f.Result.Message,
			ResourceRef: f.Result.ResourceRef, Tags: f.Result.Tags}
		if f.Result.Field != nil {
			r.Field = &jsonField{Path: f.Result.Field.Path}
		}
		if f.Object != nil {
			r.File = &jsonFile{Path: f.Object.File, Index: f.Object.Index, Line: f.Line}
		} else if f.File != "" { // a file that holds no object, such as one not read
			r.File = &jsonFile{Path: f.File, Line: f.Line}
		}
		out.Results = append(out.Results, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
