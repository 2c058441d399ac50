package verb

import (
	"flag"
	"slices"
	"strings"
)

// Skew is what a runtime met on its command line and in its SPARKUI_* environment that it does
// not know: settings of a newer runtime contract (docs/runtime-contract.md). Within a major
// contract a newer setting is one an older runtime may ignore; one it must not ignore is named
// with the Required prefix, which every runtime since contract 1.1 recognises without knowing
// the setting itself.
type Skew struct {
	Flags    []string // unknown flags, as --name
	Env      []string // unknown SPARKUI_* variables
	Required []string // those of Flags and Env it must not ignore
}

// RequiredFlagPrefix and RequiredEnvPrefix mark a setting no runtime may ignore: a runtime that
// does not know one refuses to bind rather than bind without it (a stricter identity proof or
// guard, say, whose absence could bind the wrong UI).
const (
	RequiredFlagPrefix = "require-"
	RequiredEnvPrefix  = "SPARKUI_REQUIRE_"
)

// Empty says nothing unknown was met.
func (s Skew) Empty() bool { return len(s.Flags) == 0 && len(s.Env) == 0 }

// SplitFlags removes from args the flags fs does not define and returns the rest, for
// fs.Parse, with what it removed. The function writes every flag as one `--name=value`
// argument (internal/sidecar.Config.Args), so an unknown flag never takes the next argument as
// its value; a bare unknown `--name` is taken as a boolean. -h and -help stay for fs.Parse.
// After `--`, or at the first non-flag argument (which run refuses), nothing is removed.
func SplitFlags(fs *flag.FlagSet, args []string) (known []string, s Skew) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(known, args[i:]...), s
		}
		name, hasValue := strings.TrimLeft(a, "-"), false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, hasValue = name[:j], true
		}
		f := fs.Lookup(name)
		if f == nil && name != "h" && name != "help" {
			s.Flags = append(s.Flags, "--"+name)
			if strings.HasPrefix(name, RequiredFlagPrefix) {
				s.Required = append(s.Required, "--"+name)
			}
			continue
		}
		known = append(known, a)
		// A known non-boolean flag written as `--name value` takes the next argument.
		if f != nil && !hasValue && !isBool(f) && i+1 < len(args) {
			i++
			known = append(known, args[i])
		}
	}
	return known, s
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// UnknownEnv adds to s the SPARKUI_* variables of environ that are neither the
// SPARKUI_<FLAG> of a flag of fs (EnvDefaults) nor one of also (variables the function writes
// for the kubelet to expand, such as SPARKUI_RUN_LABEL_VALUE), sorted.
func UnknownEnv(s Skew, fs *flag.FlagSet, environ []string, also ...string) Skew {
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { known[EnvName(f.Name)] = true })
	for _, a := range also {
		known[a] = true
	}
	var unknown []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SPARKUI_") && !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range slices.Compact(unknown) {
		s.Env = append(s.Env, k)
		if strings.HasPrefix(k, RequiredEnvPrefix) {
			s.Required = append(s.Required, k)
		}
	}
	return s
}

// EnvName is the SPARKUI_<FLAG> variable of a flag.
func EnvName(flagName string) string {
	return "SPARKUI_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}
