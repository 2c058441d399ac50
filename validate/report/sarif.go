package report

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// SARIF 2.1.0, the subset code-scanning UIs read. Hand-written rather than go-sarif: see
// docs/validate.md ("SARIF").

const sarifSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool       `json:"tool"`
	Artifacts  []sarifArtifact `json:"artifacts,omitempty"`
	Results    []sarifResult   `json:"results"`
	ColumnKind string          `json:"columnKind,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name,omitempty"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      sarifText       `json:"fullDescription"`
	Help                 sarifText       `json:"help"`
	HelpURI              string          `json:"helpUri,omitempty"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
	Properties           map[string]any  `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifArtifact struct {
	Location sarifArtifactLocation `json:"location"`
}

type sarifArtifactLocation struct {
	URI   string `json:"uri"`
	Index *int   `json:"index,omitempty"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  *int            `json:"ruleIndex,omitempty"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Properties map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

func sarifLevel(s framework.Severity) string {
	switch s {
	case framework.Error:
		return "error"
	case framework.Warning:
		return "warning"
	}
	return "note"
}

// sarifURI turns a file name into a URI reference: relative paths stay relative (code-scanning
// UIs resolve them against the repository), absolute ones become file: URIs.
func sarifURI(p string) string {
	p = filepath.ToSlash(p)
	if strings.HasPrefix(p, "/") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// sarifRules is the catalog as SARIF reportingDescriptors.
func sarifRules(rules []Rule) []sarifRule {
	var out []sarifRule
	for _, r := range rules {
		out = append(out, sarifRule{
			ID:               r.ID,
			Name:             r.Name,
			ShortDescription: sarifText{Text: r.Title},
			FullDescription:  sarifText{Text: r.Catches + " " + r.Why},
			Help: sarifText{
				Text: "What it catches: " + r.Catches + "\nWhy it matters: " + r.Why + "\nHow to fix: " + r.Fix + "\n" + r.HelpURI,
				Markdown: "**What it catches:** " + r.Catches + "\n\n**Why it matters:** " + r.Why + "\n\n**How to fix:** " + r.Fix +
					"\n\n[" + r.ID + " in the rules reference](" + r.HelpURI + ")",
			},
			HelpURI:              r.HelpURI,
			DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(r.Severity)},
			Properties:           map[string]any{"tags": []string{"kubernetes", "spark", "sparkui"}},
		})
	}
	return out
}

// WriteSARIF writes a SARIF 2.1.0 log: one run, the catalog as its rules, every file as an
// artifact, each finding at its file and line and, logically, at its object and field.
func WriteSARIF(w io.Writer, rep *Report) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "sparkui-fn", Version: rep.ToolVersion,
			InformationURI: "https://github.com/sparkui/sparkui", Rules: sarifRules(rep.Rules)}},
		Results:    []sarifResult{},
		ColumnKind: "unicodeCodePoints",
	}
	artifact := map[string]int{}
	for i, f := range rep.Files {
		artifact[f] = i
		run.Artifacts = append(run.Artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: sarifURI(f)}})
	}
	for _, f := range rep.Findings {
		res := sarifResult{RuleID: f.Rule, Level: sarifLevel(f.Result.Severity), Message: sarifText{Text: oneLine(f.Result.Message)}}
		if f.RuleIndex >= 0 {
			ix := f.RuleIndex
			res.RuleIndex = &ix
		}
		var loc sarifLocation
		if f.File != "" {
			pl := &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: sarifURI(f.File)}}
			if ix, ok := artifact[f.File]; ok {
				pl.ArtifactLocation.Index = &ix
			}
			if f.Line > 0 {
				pl.Region = &sarifRegion{StartLine: f.Line}
			}
			loc.PhysicalLocation = pl
		}
		if ref := f.Result.ResourceRef; ref != nil {
			fq := ref.Kind + "/"
			if ref.Namespace != "" {
				fq += ref.Namespace + "/"
			}
			fq += ref.Name
			if p := f.field(); p != "" {
				fq += "#" + p
			}
			loc.LogicalLocations = []sarifLogicalLocation{{Name: ref.Name, FullyQualifiedName: fq, Kind: "object"}}
		}
		if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
			res.Locations = []sarifLocation{loc}
		}
		if p := f.field(); p != "" {
			res.Properties = map[string]any{"field": p}
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}})
}
