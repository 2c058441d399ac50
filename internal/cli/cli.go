// Package cli is the one help format of sparkui's command lines (sparkui-fn, sparkui-fn
// validate, sparkui-runtime and its verbs): each command's text lives once, in a Command, and
// is both its --help and its section of docs/cli.md (generated from the same Render, and
// tested to be current). sparkui-fn parses with cobra/pflag, sparkui-runtime with Go's flag
// package (it keeps accepting the single-dash spellings older Pod specs may carry); both
// list their flags here with double dashes.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Command is one command's help.
type Command struct {
	// Path is the command as typed: "sparkui-fn validate".
	Path string
	// Short is one line: what it does.
	Short string
	// Usage are the invocation forms, one a line, each written whole.
	Usage []string
	// Long is the explanation, paragraphs separated by blank lines, wrapped as written.
	Long string
	// Commands lists the subcommands of a root command.
	Commands []Sub
	// Examples are shell lines; a line starting with "#" is a comment.
	Examples []string
	// Exit are the exit statuses.
	Exit []Exit
	// See names the page with more.
	See string
}

// Sub is a subcommand in a root command's list.
type Sub struct{ Name, Short string }

// Exit is one exit status and what it means.
type Exit struct {
	Code    int
	Meaning string
}

// Flag is one flag as the help lists it.
type Flag struct {
	Name, Short string
	// Value names the flag's argument ("" for a boolean).
	Value   string
	Default string
	Usage   string
}

// Render is the help text: the same for --help and docs/cli.md.
func (c Command) Render(flags []Flag) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\nUsage:\n", c.Path, c.Short)
	for _, u := range c.Usage {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	if c.Long != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(c.Long, "\n"))
	}
	if len(c.Commands) > 0 {
		b.WriteString("\nCommands:\n")
		w := 0
		for _, s := range c.Commands {
			w = max(w, len(s.Name))
		}
		for _, s := range c.Commands {
			fmt.Fprintf(&b, "  %-*s  %s\n", w, s.Name, s.Short)
		}
	}
	if len(flags) > 0 {
		b.WriteString("\nFlags:\n")
		cols := make([]string, len(flags))
		w := 0
		for i, f := range flags {
			short := "    "
			if f.Short != "" {
				short = "-" + f.Short + ", "
			}
			cols[i] = short + "--" + f.Name
			if f.Value != "" {
				cols[i] += " " + strings.ToUpper(f.Value)
			}
			w = max(w, len(cols[i]))
		}
		for i, f := range flags {
			u := f.Usage
			if f.Default != "" {
				u += " (default " + f.Default + ")"
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", w, cols[i], u)
		}
	}
	if len(c.Examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range c.Examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	if len(c.Exit) > 0 {
		b.WriteString("\nExit status:\n")
		for _, e := range c.Exit {
			fmt.Fprintf(&b, "  %d  %s\n", e.Code, e.Meaning)
		}
	}
	if c.See != "" {
		fmt.Fprintf(&b, "\nMore: %s\n", c.See)
	}
	return b.String()
}

// HelpFlag is -h, --help as every command lists it.
var HelpFlag = Flag{Name: "help", Short: "h", Usage: "print this help and exit 0"}

// GoFlags lists a flag package FlagSet's flags (sorted by name, as VisitAll gives them), then
// --help.
func GoFlags(fs *flag.FlagSet) []Flag {
	var out []Flag
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if isBool(f) {
			name = ""
		} else if name == "value" {
			name = "string"
		}
		out = append(out, Flag{Name: f.Name, Value: name, Default: shownDefault(f.DefValue, name), Usage: usage})
	})
	return append(out, HelpFlag)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// shownDefault is a default worth printing: not the type's zero value.
func shownDefault(def, value string) string {
	switch def {
	case "", "0", "0s", "false", "[]":
		return ""
	}
	if value == "string" {
		return fmt.Sprintf("%q", def)
	}
	return def
}

// ParseGo parses args with fs in the one style: --help prints the help on stdout (exit 0);
// a bad flag is one line on stderr naming it, and where the help is (exit 2). ok is false
// when the command must exit with code.
func ParseGo(fs *flag.FlagSet, c Command, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, c.Render(GoFlags(fs)))
		return 0, false
	}
	fmt.Fprintf(stderr, "%s: %s\n", c.Path, FlagError(err))
	return 2, false
}

// FlagError words the flag package's parse errors with the double-dash spelling the help uses.
func FlagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + strings.TrimLeft(name, "-") + HelpHint
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag --" + strings.TrimLeft(name, "-") + " needs a value" + HelpHint
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if i := strings.Index(rest, " for flag -"); i >= 0 {
			return "invalid value " + rest[:i] + " for flag --" + strings.TrimLeft(rest[i+len(" for flag -"):], "-") + HelpHint
		}
	}
	return msg + HelpHint
}

// HelpHint ends a usage error: where the command's flags are.
const HelpHint = " (--help lists the flags)"
