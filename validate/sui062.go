package validate

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI062: the runtime image is older than the settings its sidecar carries.
var SUI062 = Rule{
	ID:       "SUI062",
	Severity: framework.Error,
	Title:    "the runtime image implements an older runtime contract than its sidecar's settings need",
	Name:     "RuntimeImageTooOld",
	Catches: "A sparkui-runtime sidecar whose image tag names a runtime contract (`contract-MAJOR.MINOR`, or `0.1.0`, the contract 1.0 runtime tagged before contracts existed) older than one of the flags or variables it is given: " +
		"each setting has the contract that introduced it (internal/version/settings.go, CHANGELOG.md), and a flag or `SPARKUI_*` variable this sparkui-fn does not know belongs to a newer contract than its own. " +
		"The image is `runtime.image` in the functionConfig, written into every sidecar, or the sidecar's own.",
	Why: "A runtime does not know what a newer contract added. The contract 1.0 runtime stops at an unknown flag and idles: the UI Service is never bound, and it ignores an unknown variable without a word. " +
		"From contract 1.1 the runtime ignores an unknown setting, binds without what it adds and says so in its termination message; it refuses an unknown `--require-*` / `SPARKUI_REQUIRE_*` one and binds nothing (docs/runtime-contract.md). " +
		"Error where the application is left without its UI (or with a required setting silently dropped), warning where the runtime binds without what the setting adds.",
	Fix: "Set `runtime.image` to the image of the contract the settings need (the message names it: `…/sparkui-runtime:contract-MAJOR.MINOR`, in your mirror if you use one), or remove the pin: sparkui-fn's default is the image of the contract it writes for.",
	Failing: `kind: Pod
spec:
  initContainers:
  - name: sparkui-runtime
    image: ghcr.io/sparkui/sparkui-runtime:0.1.0   # SUI062 spec.initContainers[0].image: contract 1.0
    args: [run, --service=…, --from-a-newer-contract=x]   # a flag of a later contract
`,
	Passing: `    image: ghcr.io/sparkui/sparkui-runtime:contract-1.1   # or the contract the newest setting needs
`,
	Notes: "The tag is taken at its word: with a tag and a digest (`…:contract-1.1@sha256:…`) the tag is judged and the digest is what the kubelet pulls. " +
		"An image the tag of which says nothing (a digest alone, no tag, `latest`, a mirror's own scheme) is SUI063's. " +
		"Not enforced at admission: the table of settings is the validating sparkui-fn's, and a policy installed in a cluster would judge Pods that later sparkui versions render with a stale table; and refusing a driver Pod for its UI sidecar would stop the Spark application itself.",
	Check: checkSUI062,
}

// sidecarImage is the runtime container of a and what its image and settings say.
type sidecarImage struct {
	image    string
	field    string // field path of the image
	contract version.Contract
	kind     version.ImageTagKind
	// need is the newest contract among the known settings; unknown lists the flags and
	// SPARKUI_* variables this sparkui does not know (a newer contract's, or misspelt).
	need    version.Contract
	known   map[string]version.Contract
	unknown []string
}

// runtimeImage reads a's runtime sidecar; ok is false without one (SUI008's) or without an
// image (the API server's).
func runtimeImage(a *app.App) (sidecarImage, bool) {
	i, c, list := runtimeContainerAt(a)
	if c == nil || !a.Settings.UIEnabled {
		return sidecarImage{}, false
	}
	s := sidecarImage{image: yamlx.GetStr(c, "image"), field: fmt.Sprintf("%s[%d].image", list, i),
		need: version.MustContract("1.0"), known: map[string]version.Contract{}}
	if s.image == "" {
		return sidecarImage{}, false
	}
	s.contract, s.kind = version.ImageContract(s.image)
	for _, name := range settingNames(c) {
		since, ok := version.SettingSince(name)
		if !ok {
			s.unknown = append(s.unknown, name)
			continue
		}
		v := version.MustContract(since)
		s.known[name] = v
		if s.need.Less(v) {
			s.need = v
		}
	}
	return s, true
}

// settingNames are the flags (--name) of the runtime's args after `run`, and the variables of
// its env that the runtime reads: those of the table and every SPARKUI_* one (an operator or
// user may add others, TZ say, which are none of the runtime's business).
func settingNames(c *yaml.Node) []string {
	var out []string
	for j, a := range yamlx.Items(yamlx.Get(c, "args")) {
		if name, _, _ := strings.Cut(yamlx.Str(a), "="); j > 0 && strings.HasPrefix(name, "--") {
			out = append(out, name)
		}
	}
	for _, e := range yamlx.Items(yamlx.Get(c, "env")) {
		name := yamlx.GetStr(e, "name")
		if _, ok := version.SettingSince(name); ok || strings.HasPrefix(name, "SPARKUI_") {
			out = append(out, name)
		}
	}
	return out
}

// judged reports whether the image's tag names a contract of the major this sparkui writes
// for (or an older one): only then can its settings be compared with it.
func (s sidecarImage) judged() bool {
	if s.kind != version.TagContract && s.kind != version.TagPreContract {
		return false
	}
	return s.contract.Major <= version.MustContract(version.RuntimeContract).Major
}

// repository is the image without tag and digest: the advice keeps the user's mirror.
func (s sidecarImage) repository() string {
	ref, _, _ := strings.Cut(s.image, "@")
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref
}

func isRequired(name string) bool {
	return strings.HasPrefix(name, "--require-") || strings.HasPrefix(name, "SPARKUI_REQUIRE_")
}

// checkSUI062: a pinned runtime older than a setting it is given idles, refuses, or binds
// without what the setting adds.
func checkSUI062(ctx *Context) []Finding {
	var out []Finding
	cur := version.MustContract(version.RuntimeContract)
	for _, a := range ctx.Model.Apps {
		s, ok := runtimeImage(a)
		if !ok || !s.judged() {
			continue
		}
		var late, what []string
		for name, v := range s.known {
			if s.contract.Less(v) {
				late = append(late, name)
				what = append(what, name+" (contract "+v.String()+")")
			}
		}
		// An unknown setting is newer than this sparkui's own contract: an image of that
		// contract or older cannot know it; a newer one may.
		if !cur.Less(s.contract) {
			for _, name := range s.unknown {
				late = append(late, name)
				what = append(what, name+" (not in contract "+cur.String()+", this sparkui-fn's: a newer sparkui-fn wrote it, or it is misspelt)")
			}
		}
		if len(late) == 0 {
			continue
		}
		slices.Sort(what)
		sev, effect := skewEffect(s.contract, late)
		target := "the runtime image of the sparkui-fn that wrote these settings (its default runtime.image)"
		if len(s.unknown) == 0 || cur.Less(s.contract) {
			target = s.repository() + ":" + version.RuntimeTag(s.need.String()) + " or a newer contract of major " + fmt.Sprint(s.need.Major)
		}
		out = append(out, Finding{Object: a.Object, Field: s.field, Severity: sev,
			Msg: fmt.Sprintf("the runtime image %s implements runtime contract %s, older than its settings need: %s. %s. Set runtime.image (functionConfig) to %s; sparkui-fn's default is %s",
				s.image, s.contract, strings.Join(what, ", "), effect, target, version.RuntimeImage())})
	}
	return out
}

// skewEffect is what a runtime of contract c does with settings it does not know
// (docs/runtime-contract.md, "Skew, in both directions"; runtime/verb.SplitFlags).
func skewEffect(c version.Contract, late []string) (framework.Severity, string) {
	var flags, required bool
	for _, n := range late {
		flags = flags || strings.HasPrefix(n, "--")
		required = required || isRequired(n)
	}
	if c.Less(version.MustContract("1.1")) {
		switch {
		case flags:
			return framework.Error, "A contract " + c.String() + " runtime stops at a flag it does not know and idles: the UI Service is never bound"
		case required:
			return framework.Error, "A contract " + c.String() + " runtime ignores variables it does not know without a word, a required one too: it binds without a check it must not skip"
		}
		return framework.Warning, "A contract " + c.String() + " runtime ignores variables it does not know without a word: it binds without what they add"
	}
	if required {
		return framework.Error, "A contract " + c.String() + " runtime refuses a --require-* or SPARKUI_REQUIRE_* setting it does not know: the UI Service is never bound (the reason is in its termination message)"
	}
	return framework.Warning, "A contract " + c.String() + " runtime ignores them and binds without what they add, and says so in its termination message"
}
