// Package validatecmd is `sparkui-fn validate`: it reads plain YAML (files, directories,
// stdin), runs the function in validate mode on all of it at once, and places every result at
// its file and line in a report (package validate/report) printed in the format asked for.
package validatecmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/validate/report"
)

// Exit statuses of `sparkui-fn validate`.
const (
	ExitClean    = 0 // no finding of severity error (warnings and info may be printed)
	ExitFindings = 1 // at least one finding of severity error
	ExitUnusable = 2 // the input could not be read: unreadable file, YAML syntax, bad --config
)

// SkippedRule is reported for a file of a directory that is not a regular file.
const SkippedRule = "SUI052"

// ExitCode is the error the command returns when it must exit non-zero; it has already said
// why on stderr.
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Help is `sparkui-fn validate --help` and its section of docs/cli.md.
var Help = cli.Command{
	Path:  "sparkui-fn validate",
	Short: "check plain YAML with sparkui's rules; nothing is changed or written back",
	Usage: []string{
		"sparkui-fn validate [FILE|DIR|-]... [--output text|json|sarif|junit] [--config FILE] [--stdin-name NAME] [--memory-limit BYTES] [--max-input-bytes BYTES]",
		"sparkui-fn validate --baseline OLD [NEW|DIR|-]... [--output text|json|sarif|junit]",
	},
	Long: `Runs exactly what the KRM function runs with mode: validate, on all the objects at once (an
application's Pod, Services, ConfigMap and RBAC may sit in different files), and reports each
finding at its file and line.

  FILE  a YAML file: documents separated by ---, or JSON objects one after another; a v1
        List that is the whole file is unwrapped
  DIR   every *.yaml and *.yml below DIR (directories starting with "." are skipped); a
        kustomization directory is refused: validate what it builds
  -     standard input (also when no FILE is given)

Validate what will be applied, after sparkui-fn ran: an application the function never
transformed is an error (SUI060), and so is an input with no object at all.

With --baseline OLD, NEW is compared with OLD (the rendering the cluster has, e.g. the main
branch's) instead: for every carrier in both whose spec differs, a finding says which fields
changed (sparkui's or yours) and what applying NEW does to it, from its controller: refused
by the API server (SUI070, error), the running application restarted (SUI071) or the change
never applied (SUI072, warnings), the next run (SUI073) or in place (SUI074, info). Other
objects and carriers in only one rendering are not reported. See docs/upgrading.md.`,
	Examples: []string{
		"kustomize build --enable-alpha-plugins --enable-exec overlays/prod | sparkui-fn validate -",
		"kustomize build --enable-alpha-plugins --enable-exec overlays/prod > prod.yaml",
		"sparkui-fn validate prod.yaml --output sarif > sparkui.sarif",
		"sparkui-fn validate manifests/ --config sparkui.yaml --output junit > sparkui-junit.xml",
		"sparkui-fn validate --baseline main.yaml change.yaml --output sarif > impact.sarif",
	},
	Exit: []cli.Exit{
		{Code: ExitClean, Meaning: "no finding of severity error (warnings and info may be printed)"},
		{Code: ExitFindings, Meaning: "at least one finding of severity error"},
		{Code: ExitUnusable, Meaning: "unusable input, the reason on stderr and nothing on stdout: an unreadable file, a YAML syntax error, a bad flag or --config, no object at all, a kustomization directory, an input over --memory-limit (its estimate) or --max-input-bytes"},
	},
	See: "docs/validate.md, docs/rules.md",
}

// Options are the command's flags and arguments.
type Options struct {
	Output    string
	Config    string
	StdinName string
	Paths     []string
	// Baseline is the previous rendering (--baseline): Paths are then compared with it.
	Baseline string
	// Limits bound what is read from every input together (bytes, and the memory estimate).
	Limits inputlimit.Limits
}

// New is the cobra command. It prints its own messages and returns an ExitCode when the
// process must exit non-zero.
func New() *cobra.Command {
	o := Options{}
	cmd := &cobra.Command{
		Use:           "validate [FILE|DIR|-]...",
		Short:         "Validate plain YAML with sparkui's rules (text, json, sarif or junit report)",
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Paths = args
			if code := run(o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != ExitClean {
				return ExitCode(code)
			}
			return nil
		},
	}
	var maxBytes, memory string
	cmd.PreRunE = func(*cobra.Command, []string) error {
		lim, err := inputlimit.FromEnv(os.Getenv, inputlimit.Detect(os.ReadFile))
		if err == nil && memory != "" {
			err = lim.Set(inputlimit.MemoryFlag, memory)
		}
		if err == nil && maxBytes != "" {
			err = lim.Set(inputlimit.BytesFlag, maxBytes)
		}
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "sparkui-fn validate: %v\n", err)
			return ExitCode(ExitUnusable)
		}
		o.Limits = lim
		return nil
	}
	f := cmd.Flags()
	f.StringVar(&memory, inputlimit.MemoryFlag, "", "the memory the run may use (`bytes`, Ki, Mi, Gi; default the cgroup's limit, else 4Gi, or $SPARKUI_MEMORY_LIMIT; 0: no limit): an input whose estimate (~200 bytes a YAML node, ~5 a byte) is over 60 % of it is refused (exit 2) before it is parsed")
	f.StringVar(&maxBytes, inputlimit.BytesFlag, "", "the most `bytes` read from all inputs together (default what --memory-limit allows at ~5 bytes of memory a byte, or $SPARKUI_MAX_INPUT_BYTES; units Ki, Mi, Gi; 0: no limit): a larger input is refused (exit 2) before it is parsed")
	f.StringVarP(&o.Output, "output", "o", "text", "the report's `format`: text (file:line: severity: message, a summary on stderr), json, sarif (SARIF 2.1.0, for code scanning) or junit (JUnit XML)")
	f.StringVar(&o.Config, "config", "", "a functionConfig `file` (SparkUIService or ConfigMap) for the other settings, e.g. createRBAC: \"false\" or spark.* properties; its mode is always validate")
	f.StringVar(&o.Baseline, "baseline", "", "the previous rendering (a `file`, directory or -) to compare the input with: report what applying the input over it does to each carrier, instead of the rules (docs/upgrading.md)")
	f.StringVar(&o.StdinName, "stdin-name", "stdin", "the file `name` reports give standard input")
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { fmt.Fprint(c.OutOrStdout(), Help.Render(Flags(c.Flags()))) })
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintf(c.ErrOrStderr(), "sparkui-fn validate: %v%s\n", flagError(err), cli.HelpHint)
		return ExitCode(ExitUnusable)
	})
	return cmd
}

// Flags lists a cobra command's flags in the help's format (sorted, --help last).
func Flags(fs *pflag.FlagSet) []cli.Flag {
	var out []cli.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || f.Hidden {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		if f.Value.Type() == "bool" {
			name = ""
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" {
			def = f.DefValue
			if f.Value.Type() == "string" {
				def = `"` + def + `"`
			}
		}
		out = append(out, cli.Flag{Name: f.Name, Short: f.Shorthand, Value: name, Default: def, Usage: usage})
	})
	return append(out, cli.HelpFlag)
}

// flagError words pflag's errors as the command always has.
func flagError(err error) error {
	var ne *pflag.NotExistError
	var vr *pflag.ValueRequiredError
	switch {
	case errors.As(err, &ne):
		return fmt.Errorf("unknown flag %s", dashed(ne.GetSpecifiedName(), ne.GetSpecifiedShortnames()))
	case errors.As(err, &vr):
		return fmt.Errorf("flag %s needs a value", dashed(vr.GetSpecifiedName(), vr.GetSpecifiedShortnames()))
	}
	return err
}

// dashed is the flag as typed: pflag reports a bad shorthand with both names set.
func dashed(name, short string) string {
	if short != "" {
		return "-" + short
	}
	return "--" + name
}

// NormalizeArgs keeps the spellings the command accepted before it used pflag: Go-style
// single-dash long flags (-output json) and double-dash short ones (--o json).
func NormalizeArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			dashes := ""
			switch name {
			case "output", "config", "stdin-name", "baseline", "help", inputlimit.BytesFlag, inputlimit.MemoryFlag:
				dashes = "--"
			case "o", "h":
				dashes = "-"
			}
			if dashes != "" {
				a = dashes + name
				if hasVal {
					a += "=" + val
				}
			}
		}
		out = append(out, a)
	}
	return out
}

func run(o Options, stdin io.Reader, stdout, stderr io.Writer) int {
	write, ok := report.Formats[o.Output]
	if !ok {
		fmt.Fprintf(stderr, "sparkui-fn validate: --output %q: want text, json, sarif or junit\n", o.Output)
		return ExitUnusable
	}
	if o.StdinName == "" {
		fmt.Fprintf(stderr, "sparkui-fn validate: --stdin-name must not be empty\n")
		return ExitUnusable
	}
	if len(o.Paths) == 0 {
		o.Paths = []string{"-"}
	}
	validateOrCompare := Validate
	if o.Baseline != "" {
		validateOrCompare = Baseline
	}
	rep, err := validateOrCompare(o, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "sparkui-fn validate: %v\n", err)
		return ExitUnusable
	}
	if len(rep.Objects) == 0 {
		read := rep.Files
		if len(read) == 0 {
			read = o.Paths
		}
		fmt.Fprintf(stderr, "sparkui-fn validate: no objects in %s: nothing to validate, which a gate must not pass. "+
			"If the input is a pipe, the command before it wrote nothing: see its error above, and run the pipeline under set -o pipefail\n", strings.Join(read, ", "))
		return ExitUnusable
	}
	werr := write(stdout, rep)
	if o.Output == "text" {
		fmt.Fprintf(stderr, "sparkui-fn validate: %s\n", rep.Summary())
	}
	if werr != nil {
		fmt.Fprintf(stderr, "sparkui-fn validate: writing the report: %v\n", werr)
		return ExitUnusable
	}
	if rep.Count(framework.Error) > 0 {
		return ExitFindings
	}
	return ExitClean
}

func placeLine(o *object, r *framework.Result) int {
	if r.Field != nil {
		return fieldLine(o.node, r.Field.Path)
	}
	return o.Line
}

// Validate reads every input, runs the function in validate mode on all the objects at once
// (an application's Pod, Services, ConfigMap and RBAC may sit in different files) and places
// each result at its file and line.
func Validate(opts Options, stdin io.Reader) (*report.Report, error) {
	in := &krmio.FilesReader{Paths: opts.Paths, Stdin: stdin, StdinName: opts.StdinName, Budget: opts.Limits.Budget()}
	items, err := in.Read()
	if err != nil {
		return nil, err
	}
	rep := &report.Report{Rules: report.Catalog(), ToolVersion: version.Version, Files: in.Files}
	at := map[string]map[int]*object{}
	var skipped, held []*report.Finding
	placed := map[string]bool{}
	for _, s := range in.Skipped {
		msg := fmt.Sprintf("[%s] %s is %s, not a regular file: not read (reading it could block forever)", SkippedRule, s.Name, s.Skipped)
		skipped = append(skipped, &report.Finding{Rule: SkippedRule, File: s.Name, RuleIndex: -1,
			Result: &framework.Result{Message: msg, Severity: framework.Warning, Tags: map[string]string{"rule": SkippedRule},
				File: &framework.File{Path: s.Name}}})
	}
	for i, d := range in.Docs {
		o := newObject(d)
		if at[o.File] == nil {
			at[o.File] = map[int]*object{}
		}
		at[o.File][o.Index] = o
		rep.Objects = append(rep.Objects, o.Object)
		// What the function does not read and cannot place (metadata that is no mapping,
		// where the file annotations cannot go): its result, placed here.
		if r := in.Held.Why(items[i]); r != nil && r.File == nil {
			held = append(held, &report.Finding{Result: r, Rule: r.Tags["rule"], Object: o.Object,
				File: o.File, Line: placeLine(o, r), RuleIndex: -1})
			placed[r.Message] = true
		}
	}
	fc, cfgObj, err := loadConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: fc}
	if err := function.Run(rl, in.Held, function.Options{}); err != nil {
		return nil, err
	}
	// A deprecated field is a warning, reported with the findings: the CI gate must not break
	// on what the function itself reads.
	var cfgErrs []string
	for _, r := range function.ConfigRefusals(rl.Results) {
		cfgErrs = append(cfgErrs, r.Message)
	}
	if len(cfgErrs) > 0 {
		return nil, fmt.Errorf("--config %s is not a usable functionConfig:\n  %s", opts.Config, strings.Join(cfgErrs, "\n  "))
	}
	ruleIx := map[string]int{}
	for i, r := range rep.Rules {
		ruleIx[r.ID] = i
	}
	for _, f := range append(skipped, held...) {
		if i, ok := ruleIx[f.Rule]; ok {
			f.RuleIndex = i
		}
		rep.Findings = append(rep.Findings, f)
	}
	for _, r := range rl.Results {
		if r.File == nil && placed[r.Message] {
			continue // the same result, placed above
		}
		f := &report.Finding{Result: r, Rule: r.Tags["rule"], RuleIndex: -1}
		if i, ok := ruleIx[f.Rule]; ok {
			f.RuleIndex = i
		}
		var o *object
		if r.File != nil {
			o = at[r.File.Path][r.File.Index]
		}
		if o == nil && cfgObj != nil && r.File != nil && r.File.Path == cfgObj.File {
			o = cfgObj
		}
		if o != nil {
			f.Object = o.Object
			f.File = o.File
			f.Line = o.Line
			if r.Field != nil {
				f.Line = fieldLine(o.node, r.Field.Path)
			}
		}
		rep.Findings = append(rep.Findings, f)
	}
	// By place, so a report reads like the files; results without a place go last.
	fileIx := map[string]int{}
	for i, f := range rep.Files {
		fileIx[f] = i
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if (a.File == "") != (b.File == "") {
			return b.File == ""
		}
		if a.File != b.File {
			return fileIx[a.File] < fileIx[b.File]
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.RuleIndex < b.RuleIndex
	})
	return rep, nil
}
