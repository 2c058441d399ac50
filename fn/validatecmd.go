package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/validate"
)

// Exit statuses of `sparkui-fn validate`.
const (
	exitClean    = 0 // no finding of severity error (warnings and info may be printed)
	exitFindings = 1 // at least one finding of severity error
	exitUnusable = 2 // the input could not be read: unreadable file, YAML syntax, bad --config
)

const validateUsage = `usage: sparkui-fn validate [FILE|DIR|-]... [--output text|json|sarif|junit]
                           [--config FILE] [--stdin-name NAME]

Validates plain multi-document YAML (e.g. the output of kustomize build) with sparkui's rules,
exactly as the KRM function does with mode: validate: nothing is changed or written back.

  FILE        a YAML file (several documents separated by ---; a v1 List is unwrapped)
  DIR         every *.yaml and *.yml below DIR (directories starting with "." are skipped)
  -           standard input (also when no FILE is given)
  --output    text (default: one line per finding, file:line: severity: message),
              json, sarif (SARIF 2.1.0, for code-scanning UIs), junit (JUnit XML test report)
  --config    a functionConfig (SparkUIService or ConfigMap) for the other settings, e.g.
              createRBAC: "false" or spark.* properties; its mode is always validate
  --stdin-name  the file name reports give standard input (default "stdin")

Exit status: 0 no error finding, 1 error findings, 2 unusable input (the reason on stderr).
`

type validateOptions struct {
	output    string
	config    string
	stdinName string
	paths     []string
}

// runValidate is `sparkui-fn validate`.
func runValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, help, err := parseValidateArgs(args)
	if help {
		fmt.Fprint(stdout, validateUsage)
		return exitClean
	}
	if err != nil {
		fmt.Fprintf(stderr, "sparkui-fn validate: %v\n%s", err, validateUsage)
		return exitUnusable
	}
	rep, err := validateInputs(opts, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "sparkui-fn validate: %v\n", err)
		return exitUnusable
	}
	var werr error
	switch opts.output {
	case "text":
		werr = writeText(stdout, rep)
		fmt.Fprintf(stderr, "sparkui-fn validate: %s\n", rep.summary())
	case "json":
		werr = writeJSON(stdout, rep)
	case "sarif":
		werr = writeSARIF(stdout, rep)
	case "junit":
		werr = writeJUnit(stdout, rep)
	}
	if werr != nil {
		fmt.Fprintf(stderr, "sparkui-fn validate: writing the report: %v\n", werr)
		return exitUnusable
	}
	if rep.count(framework.Error) > 0 {
		return exitFindings
	}
	return exitClean
}

func parseValidateArgs(args []string) (validateOptions, bool, error) {
	o := validateOptions{output: "text", stdinName: "stdin"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			o.paths = append(o.paths, args[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			o.paths = append(o.paths, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var dst *string
		switch name {
		case "h", "help":
			return o, true, nil
		case "o", "output":
			dst = &o.output
		case "config":
			dst = &o.config
		case "stdin-name":
			dst = &o.stdinName
		default:
			return o, false, fmt.Errorf("unknown flag %s", a)
		}
		if !hasVal {
			if i+1 >= len(args) {
				return o, false, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		}
		*dst = val
	}
	switch o.output {
	case "text", "json", "sarif", "junit":
	default:
		return o, false, fmt.Errorf("--output %q: want text, json, sarif or junit", o.output)
	}
	if o.stdinName == "" {
		return o, false, errors.New("--stdin-name must not be empty")
	}
	if len(o.paths) == 0 {
		o.paths = []string{"-"}
	}
	return o, false, nil
}

// object is one Kubernetes object of the input and where it was read.
type object struct {
	node  *yaml.Node // its mapping node
	file  string
	index int // position among the file's objects, as config.kubernetes.io/index counts
	line  int
}

func (o *object) id() string {
	kind := yamlx.GetStr(o.node, "kind")
	ns, name := yamlx.GetStr(o.node, "metadata", "namespace"), yamlx.GetStr(o.node, "metadata", "name")
	if kind == "" && name == "" {
		return fmt.Sprintf("document %d", o.index)
	}
	if ns != "" {
		return kind + "/" + ns + "/" + name
	}
	return kind + "/" + name
}

// finding is a result placed in the input.
type finding struct {
	res    *framework.Result
	rule   string
	obj    *object // nil when the result names no object of the input
	file   string  // "" when unknown
	line   int     // 0 when unknown
	ruleIx int
}

type report struct {
	files    []string
	objects  []*object
	findings []*finding
}

func (r *report) count(sev framework.Severity) int {
	n := 0
	for _, f := range r.findings {
		if f.res.Severity == sev {
			n++
		}
	}
	return n
}

func (r *report) summary() string {
	plural := func(n int, s string) string {
		if n == 1 {
			return "1 " + s
		}
		return strconv.Itoa(n) + " " + s + "s"
	}
	return fmt.Sprintf("%s, %s, %d info in %s from %s",
		plural(r.count(framework.Error), "error"), plural(r.count(framework.Warning), "warning"),
		r.count(framework.Info), plural(len(r.objects), "object"), plural(len(r.files), "file"))
}

// validateInputs reads every input, runs the function in validate mode on all the objects at
// once (an application's Pod, Services, ConfigMap and RBAC may sit in different files) and
// places each result at its file and line.
func validateInputs(opts validateOptions, stdin io.Reader) (*report, error) {
	srcs, err := collectSources(opts.paths, stdin, opts.stdinName)
	if err != nil {
		return nil, err
	}
	rep := &report{}
	at := map[string]map[int]*object{}
	var items []*yaml.RNode
	for _, s := range srcs {
		objs, err := parseObjects(s.name, s.data)
		if err != nil {
			return nil, err
		}
		rep.files = append(rep.files, s.name)
		at[s.name] = map[int]*object{}
		for _, o := range objs {
			at[s.name][o.index] = o
			rep.objects = append(rep.objects, o)
			annotate(o)
			items = append(items, yaml.NewRNode(o.node))
		}
	}
	fc, cfgObj, err := validateConfig(opts.config)
	if err != nil {
		return nil, err
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: fc}
	if err := Process(rl); err != nil {
		return nil, err
	}
	var cfgErrs []string
	for _, r := range rl.Results {
		if r.Tags["rule"] == "SUI014" {
			cfgErrs = append(cfgErrs, r.Message)
		}
	}
	if len(cfgErrs) > 0 {
		return nil, fmt.Errorf("--config %s is not a usable functionConfig:\n  %s", opts.config, strings.Join(cfgErrs, "\n  "))
	}
	ruleIx := map[string]int{}
	for i, r := range validate.Rules {
		ruleIx[r.ID] = i
	}
	for _, r := range rl.Results {
		f := &finding{res: r, rule: r.Tags["rule"], ruleIx: -1}
		if i, ok := ruleIx[f.rule]; ok {
			f.ruleIx = i
		}
		if r.File != nil {
			f.obj = at[r.File.Path][r.File.Index]
		}
		if f.obj == nil && cfgObj != nil && r.File != nil && r.File.Path == cfgObj.file {
			f.obj = cfgObj
		}
		if f.obj != nil {
			f.file = f.obj.file
			f.line = f.obj.line
			if r.Field != nil {
				f.line = fieldLine(f.obj.node, r.Field.Path)
			}
		}
		rep.findings = append(rep.findings, f)
	}
	// By place, so a report reads like the files; results without a place go last.
	fileIx := map[string]int{}
	for i, f := range rep.files {
		fileIx[f] = i
	}
	sort.SliceStable(rep.findings, func(i, j int) bool {
		a, b := rep.findings[i], rep.findings[j]
		if (a.file == "") != (b.file == "") {
			return b.file == ""
		}
		if a.file != b.file {
			return fileIx[a.file] < fileIx[b.file]
		}
		if a.line != b.line {
			return a.line < b.line
		}
		return a.ruleIx < b.ruleIx
	})
	return rep, nil
}

type source struct {
	name string
	data []byte
}

// collectSources reads files, directories (recursively, *.yaml and *.yml) and "-" (stdin).
func collectSources(paths []string, stdin io.Reader, stdinName string) ([]source, error) {
	var out []source
	seen := map[string]bool{}
	add := func(name string, data []byte) {
		if !seen[name] {
			seen[name] = true
			out = append(out, source{name, data})
		}
	}
	for _, p := range paths {
		if p == "-" {
			if seen[stdinName] {
				continue
			}
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading standard input: %w", err)
			}
			add(stdinName, b)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			add(filepath.Clean(p), b)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			add(filepath.Clean(path), b)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseObjects reads a multi-document YAML stream, keeping each object's line. A v1 List (what
// kubectl get -o yaml prints) or a ResourceList is unwrapped into its items.
func parseObjects(name string, data []byte) (objs []*object, err error) {
	defer func() {
		if p := recover(); p != nil {
			objs, err = nil, fmt.Errorf("%s: the YAML parser failed: %v", name, p)
		}
	}()
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	dec := yaml.NewDecoder(strings.NewReader(text))
	add := func(n *yaml.Node, doc int) error {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: document %d is not a mapping (a Kubernetes object)", name, n.Line, doc)
		}
		objs = append(objs, &object{node: n, file: name, index: len(objs), line: n.Line})
		return nil
	}
	for doc := 1; ; doc++ {
		var d yaml.Node
		if err := dec.Decode(&d); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if d.Kind != yaml.DocumentNode || len(d.Content) == 0 {
			continue
		}
		n := d.Content[0]
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue // an empty document
		}
		// Rules read plain mappings: resolve aliases and merge keys (<<: *base) as kustomize
		// does. The copies keep the lines of what they copy.
		if err := yaml.NewRNode(n).DeAnchor(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n.Line, err)
		}
		if isList(n) {
			for _, it := range yamlx.Items(yamlx.Get(n, "items")) {
				if err := add(it, doc); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := add(n, doc); err != nil {
			return nil, err
		}
	}
}

func isList(n *yaml.Node) bool {
	kind := yamlx.GetStr(n, "kind")
	items := yamlx.Get(n, "items")
	return (kind == "List" || kind == "ResourceList") && items != nil && items.Kind == yaml.SequenceNode
}

// annotate records where an object was read the way kustomize and kpt do, so the function's
// results name its file and index. An object whose metadata is not a mapping is left alone.
func annotate(o *object) {
	md := yamlx.Get(o.node, "metadata")
	if md != nil && md.Kind != yaml.MappingNode {
		return
	}
	if md == nil {
		md = yamlx.Ensure(o.node, "metadata")
	}
	ann := yamlx.Get(md, "annotations")
	if ann != nil && ann.Kind != yaml.MappingNode {
		return
	}
	if ann == nil {
		ann = yamlx.Ensure(md, "annotations")
	}
	yamlx.Set(ann, kioutil.PathAnnotation, yamlx.NewStr(o.file))
	yamlx.Set(ann, kioutil.IndexAnnotation, yamlx.NewStr(strconv.Itoa(o.index)))
}

// validateConfig is the functionConfig: the user's (--config) with its mode forced to
// validate, or a ConfigMap that says only that.
func validateConfig(path string) (*yaml.RNode, *object, error) {
	if path == "" {
		return yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sparkui-validate\ndata:\n  mode: validate\n"), nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	objs, err := parseObjects(filepath.Clean(path), b)
	if err != nil {
		return nil, nil, err
	}
	if len(objs) != 1 {
		return nil, nil, fmt.Errorf("--config %s: want one functionConfig document, found %d", path, len(objs))
	}
	o := objs[0]
	n := o.node
	av, kind := yamlx.GetStr(n, "apiVersion"), yamlx.GetStr(n, "kind")
	switch {
	case av == "v1" && kind == "ConfigMap":
		yamlx.Set(yamlx.Ensure(n, "data"), "mode", yamlx.NewStr("validate"))
	case strings.HasPrefix(av, names.ConfigGroup+"/") || kind == names.ConfigKind:
		yamlx.Set(yamlx.Ensure(n, "spec"), "mode", yamlx.NewStr("validate"))
	}
	annotate(o)
	return yaml.NewRNode(n), o, nil
}

// fieldLine is the line of a dotted field path (spec.containers[0].ports[2].containerPort,
// data["spark.properties"]) in n: of the deepest part of it that exists.
func fieldLine(n *yaml.Node, path string) int {
	line := n.Line
	cur := n
	for _, seg := range splitFieldPath(path) {
		var next *yaml.Node
		if seg.index >= 0 {
			if cur.Kind == yaml.SequenceNode && seg.index < len(cur.Content) {
				next = cur.Content[seg.index]
				line = next.Line
			}
		} else if cur.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == seg.key {
					next = cur.Content[i+1]
					line = cur.Content[i].Line
					break
				}
			}
		}
		if next == nil {
			break
		}
		cur = next
	}
	return line
}

type pathSeg struct {
	key   string
	index int // -1 for a key
}

func splitFieldPath(p string) []pathSeg {
	var out []pathSeg
	var key strings.Builder
	flush := func() {
		if key.Len() > 0 {
			out = append(out, pathSeg{key: key.String(), index: -1})
			key.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				key.WriteString(p[i:])
				i = len(p)
				continue
			}
			inner := p[i+1 : i+end]
			if q, err := strconv.Unquote(inner); err == nil && strings.HasPrefix(inner, `"`) {
				out = append(out, pathSeg{key: q, index: -1})
			} else if n, err := strconv.Atoi(inner); err == nil && n >= 0 {
				out = append(out, pathSeg{index: n})
			} else {
				out = append(out, pathSeg{key: inner, index: -1})
			}
			i += end
		default:
			key.WriteByte(c)
		}
	}
	flush()
	return out
}

// ---- text

func (f *finding) place() string {
	switch {
	case f.file != "" && f.line > 0:
		return f.file + ":" + strconv.Itoa(f.line)
	case f.file != "":
		return f.file
	}
	return "sparkui-fn"
}

func (f *finding) subject() string {
	var parts []string
	if ref := f.res.ResourceRef; ref != nil {
		name := ref.Name
		if ref.Namespace != "" {
			name = ref.Namespace + "/" + name
		}
		parts = append(parts, strings.TrimSpace(ref.Kind+" "+name))
	}
	if f.res.Field != nil && f.res.Field.Path != "" {
		parts = append(parts, f.res.Field.Path)
	}
	return strings.Join(parts, " ")
}

func writeText(w io.Writer, rep *report) error {
	for _, f := range rep.findings {
		line := fmt.Sprintf("%s: %s: %s", f.place(), f.res.Severity, oneLine(f.res.Message))
		if s := f.subject(); s != "" {
			line += " (" + s + ")"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ---- json

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

func writeJSON(w io.Writer, rep *report) error {
	out := jsonReport{Results: []jsonResult{}, Summary: jsonSummary{
		Errors: rep.count(framework.Error), Warnings: rep.count(framework.Warning), Info: rep.count(framework.Info),
		Objects: len(rep.objects), Files: len(rep.files),
	}}
	for _, f := range rep.findings {
		r := jsonResult{Rule: f.rule, Severity: string(f.res.Severity), Message: f.res.Message,
			ResourceRef: f.res.ResourceRef, Tags: f.res.Tags}
		if f.res.Field != nil {
			r.Field = &jsonField{Path: f.res.Field.Path}
		}
		if f.obj != nil {
			r.File = &jsonFile{Path: f.obj.file, Index: f.obj.index, Line: f.line}
		}
		out.Results = append(out.Results, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// ---- SARIF 2.1.0

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
func sarifRules() []sarifRule {
	var out []sarifRule
	for _, r := range validate.Rules {
		d := r
		full := d.Catches + " " + d.Why
		out = append(out, sarifRule{
			ID:               r.ID,
			Name:             d.Name,
			ShortDescription: sarifText{Text: r.Title},
			FullDescription:  sarifText{Text: full},
			Help: sarifText{
				Text: "What it catches: " + d.Catches + "\nWhy it matters: " + d.Why + "\nHow to fix: " + d.Fix + "\n" + validate.HelpURI(r.ID),
				Markdown: "**What it catches:** " + d.Catches + "\n\n**Why it matters:** " + d.Why + "\n\n**How to fix:** " + d.Fix +
					"\n\n[" + r.ID + " in the rules reference](" + validate.HelpURI(r.ID) + ")",
			},
			HelpURI:              validate.HelpURI(r.ID),
			DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(r.Severity)},
			Properties:           map[string]any{"tags": []string{"kubernetes", "spark", "sparkui"}},
		})
	}
	return out
}

func writeSARIF(w io.Writer, rep *report) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "sparkui-fn", Version: version.Version,
			InformationURI: "https://github.com/sparkui/sparkui", Rules: sarifRules()}},
		Results:    []sarifResult{},
		ColumnKind: "unicodeCodePoints",
	}
	artifact := map[string]int{}
	for i, f := range rep.files {
		artifact[f] = i
		run.Artifacts = append(run.Artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: sarifURI(f)}})
	}
	for _, f := range rep.findings {
		res := sarifResult{RuleID: f.rule, Level: sarifLevel(f.res.Severity), Message: sarifText{Text: oneLine(f.res.Message)}}
		if f.ruleIx >= 0 {
			ix := f.ruleIx
			res.RuleIndex = &ix
		}
		var loc sarifLocation
		if f.file != "" {
			pl := &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: sarifURI(f.file)}}
			if ix, ok := artifact[f.file]; ok {
				pl.ArtifactLocation.Index = &ix
			}
			if f.line > 0 {
				pl.Region = &sarifRegion{StartLine: f.line}
			}
			loc.PhysicalLocation = pl
		}
		if ref := f.res.ResourceRef; ref != nil {
			fq := ref.Kind + "/"
			if ref.Namespace != "" {
				fq += ref.Namespace + "/"
			}
			fq += ref.Name
			if f.res.Field != nil && f.res.Field.Path != "" {
				fq += "#" + f.res.Field.Path
			}
			loc.LogicalLocations = []sarifLogicalLocation{{Name: ref.Name, FullyQualifiedName: fq, Kind: "object"}}
		}
		if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
			res.Locations = []sarifLocation{loc}
		}
		if f.res.Field != nil && f.res.Field.Path != "" {
			res.Properties = map[string]any{"field": f.res.Field.Path}
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}})
}

// ---- JUnit XML

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	File     string      `xml:"file,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes a test suite per file and a test case per object and rule: the case fails
// when the rule found an error on the object; warnings and info go to its system-out.
func writeJUnit(w io.Writer, rep *report) error {
	type key struct {
		obj  *object
		rule string
	}
	byCase := map[key][]*finding{}
	var orphans []*finding
	for _, f := range rep.findings {
		if f.obj == nil || f.obj.file == "" {
			orphans = append(orphans, f)
			continue
		}
		k := key{f.obj, f.rule}
		byCase[k] = append(byCase[k], f)
	}
	out := junitSuites{Name: "sparkui-fn validate", Time: "0"}
	mkCase := func(name, class string, fs []*finding) junitCase {
		c := junitCase{Name: name, Classname: class, Time: "0"}
		var failText, other []string
		for _, f := range fs {
			where := f.place()
			if f.res.Field != nil && f.res.Field.Path != "" {
				where += " " + f.res.Field.Path
			}
			line := oneLine(f.res.Message) + " (" + where + ")"
			if f.res.Severity == framework.Error {
				if c.Failure == nil {
					c.Failure = &junitFailure{Message: oneLine(f.res.Message), Type: f.rule}
					c.File, c.Line = f.file, f.line
				}
				failText = append(failText, line)
			} else {
				other = append(other, string(f.res.Severity)+": "+line)
			}
		}
		if c.Failure != nil {
			c.Failure.Text = strings.Join(failText, "\n")
		}
		c.SystemOut = strings.Join(other, "\n")
		return c
	}
	byFile := map[string][]*object{}
	for _, o := range rep.objects {
		byFile[o.file] = append(byFile[o.file], o)
	}
	addSuite := func(s junitSuite) {
		for _, c := range s.Cases {
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	for _, file := range rep.files {
		s := junitSuite{Name: file, File: file, Time: "0"}
		for _, o := range byFile[file] {
			for _, r := range validate.Rules {
				if r.Check == nil {
					continue
				}
				c := mkCase(r.ID+" "+r.Title, o.id(), byCase[key{o, r.ID}])
				if c.File == "" {
					c.File, c.Line = o.file, o.line
				}
				s.Cases = append(s.Cases, c)
			}
		}
		addSuite(s)
	}
	if len(orphans) > 0 {
		s := junitSuite{Name: "sparkui-fn", Time: "0"}
		for _, f := range orphans {
			s.Cases = append(s.Cases, mkCase(f.rule, f.subject(), []*finding{f}))
		}
		addSuite(s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
